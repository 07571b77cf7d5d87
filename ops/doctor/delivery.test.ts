// The delivery summary's counting: by part, state and reason, with the oldest waiting age; doctor.test.ts reads
// it from rows in the Firestore emulator.
import type { Firestore } from 'firebase-admin/firestore';
import { describe, expect, it } from 'vitest';
import {
  checkIndexes,
  deliveryResult,
  type RowView,
  STUCK_CAUSES,
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
    const summary = summarise(ROWS, NOW);
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
      summarise(
        [
          ...ROWS,
          {
            createdAtMs: NOW - 90 * MIN,
            delivery: {
              contact: { ...pending('configuration'), updated_at: new Date(NOW - 5 * MIN) },
              thank_you: done,
            },
          },
        ],
        NOW,
      ),
      NOW,
    );
    expect(result.outcome).toBe('fail');
    expect(result.detail).toContain('1 contact and 0 thank-you part(s) wait for our setup');
    expect(result.lines?.[1]).toContain('configuration 1, oldest 1 h 30 min');
  });
});

describe('a stuck queue', () => {
  const at = (minutesAgo: number) => new Date(NOW - minutesAgo * MIN);

  it('fails parts pending with no progress for 30 minutes, naming the permission first', () => {
    const rows: RowView[] = [
      ...ROWS,
      ...Array.from({ length: 3 }, () => ({
        createdAtMs: NOW - 40 * MIN,
        delivery: {
          contact: { ...pending(), updated_at: at(31) },
          thank_you: { ...pending('configuration'), attempts: 4, updated_at: at(31) },
        },
      })),
    ];
    const result = deliveryResult(summarise(rows, NOW), NOW, 500);
    expect(result.outcome).toBe('fail');
    expect(result.detail).toContain('3 contact and 3 thank-you part(s) pending with no progress for 31 min');
    expect(result.fix?.indexOf('roles/run.invoker')).toBeLessThan(result.fix?.indexOf('paused') ?? 0);
    expect(result.fix?.indexOf('paused')).toBeLessThan(result.fix?.indexOf('reconciler') ?? 0);
    for (const cause of STUCK_CAUSES) expect(result.fix).toContain(cause);
    // 29 minutes is not yet stuck.
    const young = rows.map((row) =>
      row.delivery?.contact && 'updated_at' in row.delivery.contact
        ? {
            ...row,
            delivery: {
              contact: { ...row.delivery.contact, updated_at: at(29) },
              thank_you: { ...row.delivery.thank_you, updated_at: at(29) },
            },
          }
        : row,
    );
    expect(deliveryResult(summarise(young, NOW), NOW).detail).toContain('wait for our setup');
  });

  it('fails thank-yous waiting for the budget longer than MAIL_PER_HOUR explains', () => {
    const waiting = (count: number, minutesAgo: number): RowView[] =>
      Array.from({ length: count }, () => ({
        createdAtMs: NOW - minutesAgo * MIN,
        delivery: { contact: done, thank_you: { ...pending('mail_budget'), updated_at: at(minutesAgo) } },
      }));
    // 300 waiting at 100 an hour: three hours explained (and half an hour for the reconciler's turns).
    expect(deliveryResult(summarise(waiting(300, 200), NOW), NOW, 100).outcome).toBe('pass');
    const late = deliveryResult(summarise(waiting(300, 2 * 24 * 60), NOW), NOW, 100);
    expect(late.outcome).toBe('fail');
    expect(late.detail).toContain('300 thank-you(s) wait for the mail budget, the oldest for 2 days');
    expect(late.fix).toContain(STUCK_CAUSES[0]);
  });
});

describe("the reconciler's indexes", () => {
  /** A database answering the reconciler's query as Firestore does: served, or FAILED_PRECONDITION (code 9). */
  function firestoreAnswering(missing: string[]): Firestore {
    const query = (field: string) => {
      const chain = {
        where: (name: string) => query(name),
        orderBy: () => chain,
        select: () => chain,
        limit: () => chain,
        get: async () => {
          if (missing.includes(field)) {
            throw Object.assign(new Error('9 FAILED_PRECONDITION: The query requires an index.'), {
              code: 9,
            });
          }
          return { docs: [] };
        },
      };
      return chain;
    };
    return { collection: () => query('') } as unknown as Firestore;
  }

  it('passes when both due_at queries are served, and fails naming the missing index and the deploy', async () => {
    expect((await checkIndexes(firestoreAnswering([]), { emulator: false })).outcome).toBe('pass');
    const result = await checkIndexes(firestoreAnswering(['delivery.thank_you.due_at']), { emulator: false });
    expect(result.outcome).toBe('fail');
    expect(result.detail).toContain('no index for delivery.thank_you.due_at');
    expect(result.fix).toContain('firestore:indexes');
  });
});
