// The delivery summary's counting: by part, state and reason, with the oldest waiting age; doctor.test.ts reads
// it from rows in the Firestore emulator.
import { describe, expect, it } from 'vitest';
import { deliveryResult, type RowView, summarise, summaryLines } from './delivery.ts';

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
