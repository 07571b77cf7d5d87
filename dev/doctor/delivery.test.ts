// The delivery summary: counts by part, state and reason match the rows, the oldest waiting age is the oldest
// row's, and no address is printed. Counting on plain rows, then once against the Firestore emulator.
import { randomUUID } from 'node:crypto';
import { deleteApp, initializeApp } from 'firebase-admin/app';
import { type Firestore, getFirestore } from 'firebase-admin/firestore';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RunningFirestoreEmulator,
  startFirestoreEmulator,
} from '../../tests/support/firestore-emulator.ts';
import {
  checkDelivery,
  checkIndexes,
  deliveryResult,
  type RowView,
  summarise,
  summaryLines,
} from './delivery.ts';

const NOW = Date.UTC(2026, 10, 27, 12, 0);
const MIN = 60_000;
const done = { state: 'done', attempts: 1, round: 0 };
const pending = (reason?: string) => ({
  state: 'pending',
  attempts: 1,
  round: 0,
  ...(reason ? { reason } : {}),
});
const skipped = (reason: string) => ({ state: 'skipped', reason, attempts: 1, round: 0 });

const ROWS: RowView[] = [
  { createdAtMs: NOW - 50 * MIN, delivery: { contact: done, thank_you: done } },
  { createdAtMs: NOW - 40 * MIN, delivery: { contact: done, thank_you: skipped('already_thanked') } },
  {
    createdAtMs: NOW - 30 * MIN,
    delivery: { contact: skipped('suppressed'), thank_you: skipped('suppressed') },
  },
  { createdAtMs: NOW - 125 * MIN, delivery: { contact: done, thank_you: pending('mail_budget') } },
  { createdAtMs: NOW - 20 * MIN, delivery: { contact: done, thank_you: pending('mail_budget') } },
  { createdAtMs: NOW - 2 * MIN, delivery: { contact: pending(), thank_you: pending() } },
  { createdAtMs: NOW - 1 * MIN },
];

describe('the delivery summary', () => {
  it('counts each part by state and reason, with the oldest waiting age', () => {
    const summary = summarise(ROWS);
    expect(summary.rows).toBe(7);
    expect(summary.unreached).toEqual({ count: 1, oldestMs: NOW - MIN });
    expect(summary.parts.contact.done).toBe(4);
    expect([...summary.parts.contact.skipped]).toEqual([['suppressed', 1]]);
    expect([...summary.parts.thank_you.skipped].sort()).toEqual([
      ['already_thanked', 1],
      ['suppressed', 1],
    ]);
    expect(summary.parts.thank_you.waiting.get('mail_budget')).toEqual({
      count: 2,
      oldestMs: NOW - 125 * MIN,
    });
    expect(summaryLines(summary, NOW)).toEqual([
      'not yet reached by the sign-up trigger: 1, oldest 1 min',
      'contact:    done 4 · skipped 1 (suppressed 1) · waiting 1 (queued 1, oldest 2 min)',
      'thank-you:  done 1 · skipped 2 (already_thanked 1, suppressed 1) · waiting 3 (mail_budget 2, oldest 2 h 5 min; queued 1, oldest 2 min)',
    ]);
    expect(deliveryResult(summary, NOW).outcome).toBe('pass');
  });

  it('fails when parts wait for our own setup, and says what to do', () => {
    const result = deliveryResult(
      summarise([
        ...ROWS,
        { createdAtMs: NOW - 90 * MIN, delivery: { contact: pending('configuration'), thank_you: done } },
      ]),
      NOW,
    );
    expect(result.outcome).toBe('fail');
    expect(result.detail).toContain('1 contact and 0 thank-you part(s) wait for our setup');
    expect(result.lines?.[1]).toContain('configuration 1, oldest 1 h 30 min');
  });
});

describe('against Firestore', () => {
  let emulator: RunningFirestoreEmulator;
  let db: Firestore;
  const app = initializeApp(
    { projectId: `demo-doctor-${randomUUID().slice(0, 8)}` },
    `doctor-${randomUUID()}`,
  );

  beforeAll(async () => {
    emulator = await startFirestoreEmulator();
    const previous = process.env.FIRESTORE_EMULATOR_HOST;
    process.env.FIRESTORE_EMULATOR_HOST = emulator.hostPort;
    db = getFirestore(app);
    if (previous === undefined) delete process.env.FIRESTORE_EMULATOR_HOST;
    else process.env.FIRESTORE_EMULATOR_HOST = previous;
  }, 90_000);
  afterAll(async () => {
    await deleteApp(app);
    await emulator?.stop();
  });

  it('matches the rows stored, and prints no address', async () => {
    const rows = [
      { email: 'kid.one@school.example', delivery: { contact: done, thank_you: done } },
      { email: 'kid.two@school.example', delivery: { contact: done, thank_you: skipped('already_thanked') } },
      {
        email: 'parent@family.example',
        delivery: { contact: skipped('refused'), thank_you: pending('mail_budget') },
      },
      { email: 'late@family.example' },
    ];
    for (const [index, row] of rows.entries()) {
      await db
        .collection('email_subscriptions')
        .doc(`row-${index}`)
        .set({
          ...row,
          subscription_type: 'updates',
          source: 'hero_form',
          created_at: new Date(),
          mailbox_key: `key-${index}`,
        });
    }
    const result = await checkDelivery(db, Date.now());
    expect(result.outcome).toBe('pass');
    expect(result.detail).toBe('4 sign-ups');
    expect(result.lines).toEqual([
      'not yet reached by the sign-up trigger: 1, oldest 0 min',
      'contact:    done 2 · skipped 1 (refused 1) · waiting 0',
      'thank-you:  done 1 · skipped 1 (already_thanked 1) · waiting 1 (mail_budget 1, oldest 0 min)',
    ]);
    const printed = JSON.stringify(result);
    expect(printed).not.toMatch(/@|school|family|kid|parent|key-/);
    // The emulator serves the reconciler's query without an index: it cannot tell.
    expect((await checkIndexes(db, { emulator: true })).outcome).toBe('cannot tell');
  });
});
