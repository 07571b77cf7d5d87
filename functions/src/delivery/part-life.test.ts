import { describe, expect, it } from 'vitest';
import {
  CONFIRM_WAIT_MS,
  dueAt,
  firstPart,
  GIVE_UP_SLACK_MS,
  lifeOf,
  next,
  type PartEvent,
  type PartRecord,
  parsePart,
  syncRound,
} from './part-life';
import { RETRY, retryWindowMs } from './queue';

const T0 = Date.UTC(2026, 10, 27, 12, 0, 0);
const at = (minutes: number) => T0 + minutes * 60_000;

/** The part after each event in turn, null-changes left out. */
function run(part: PartRecord, ...events: Array<[PartEvent, number]>): PartRecord {
  return events.reduce((current, [event, now]) => next(current, event, now) ?? current, part);
}

const enqueued = run(firstPart(T0), [{ kind: 'enqueued', round: 0, runsAt: T0 }, T0]);

describe("a part's life (delivery/part-life.ts)", () => {
  it('starts pending on round 0, due soon until its task is confirmed, then due after the retry window', () => {
    expect(firstPart(T0)).toEqual({
      state: 'pending',
      attempts: 0,
      round: 0,
      due_at: new Date(T0 + CONFIRM_WAIT_MS),
      updated_at: new Date(T0),
    });
    expect(CONFIRM_WAIT_MS).toBeLessThanOrEqual(5 * 60_000);
    expect(enqueued).toMatchObject({ state: 'pending', round: 0, due_at: dueAt(T0) });
    expect(lifeOf(enqueued)).toEqual({ state: 'pending', round: 0 });
  });

  it('ends done, or skipped for the reason given; nothing moves it after', () => {
    const done = run(enqueued, [{ kind: 'done', round: 0 }, at(1)]);
    expect(done).toEqual({ state: 'done', attempts: 1, round: 0, updated_at: new Date(at(1)) });
    const skipped = run(enqueued, [{ kind: 'skipped', round: 0, reason: 'suppressed' }, at(1)]);
    expect(lifeOf(skipped)).toEqual({ state: 'skipped', reason: 'suppressed' });
    expect(skipped).not.toHaveProperty('due_at');
    const every: PartEvent[] = [
      { kind: 'enqueued', round: 5, runsAt: at(2) },
      { kind: 'redriven', round: 5, runsAt: at(2) },
      { kind: 'retry', round: 5, code: 'smtp ECONNECTION' },
      { kind: 'waits', round: 5, runsAt: at(60) },
      { kind: 'done', round: 5 },
      { kind: 'skipped', round: 5, reason: 'refused' },
    ];
    for (const event of every) {
      expect(next(done, event, at(2))).toBeNull();
      expect(next(skipped, event, at(2))).toBeNull();
    }
  });

  it('a refusal of our setup waits, saying why and the last code, still pending; the next success clears it', () => {
    const waiting = run(enqueued, [
      { kind: 'retry', round: 0, code: 'smtp EENVELOPE 554', reason: 'configuration' },
      at(1),
    ]);
    // Due once that task's retries from now would have ended: soon after it gives up, not after the queue's wait.
    expect(waiting).toMatchObject({
      state: 'pending',
      attempts: 1,
      due_at: new Date(at(1) + retryWindowMs(RETRY) + GIVE_UP_SLACK_MS),
    });
    expect(next(waiting, { kind: 'retry', round: 0, code: 'x' }, at(30))?.due_at).toEqual(waiting.due_at);
    expect(lifeOf(waiting)).toEqual({
      state: 'waiting',
      round: 0,
      reason: 'configuration',
      code: 'smtp EENVELOPE 554',
    });
    // A plain outage after it: still pending, the reason gone, the code kept.
    const outage = run(waiting, [{ kind: 'retry', round: 0, code: 'smtp ECONNECTION' }, at(2)]);
    expect(lifeOf(outage)).toEqual({ state: 'pending', round: 0 });
    expect(outage).toMatchObject({ attempts: 2, last_error: 'smtp ECONNECTION' });
    expect(lifeOf(run(waiting, [{ kind: 'done', round: 0 }, at(3)]))).toEqual({ state: 'done' });
  });

  it("over the mail budget: moves to the next round, enqueued for its slot's hour, waiting and due long after it", () => {
    const waits = run(enqueued, [{ kind: 'waits', round: 1, runsAt: at(60) }, at(1)]);
    // Its net: due when the round's task, run at the slot's hour, would have given up.
    expect(waits).toMatchObject({ round: 1, reason: 'mail_budget', attempts: 1, due_at: dueAt(at(60)) });
    expect(lifeOf(waits)).toEqual({ state: 'waiting', round: 1, reason: 'mail_budget' });
    // A second delivery of the round-0 task that also waited names the same round, and changes nothing.
    expect(next(waits, { kind: 'waits', round: 1, runsAt: at(60) }, at(2))).toBeNull();
    // Its round's task sends it in that hour.
    expect(lifeOf(run(waits, [{ kind: 'done', round: 1 }, at(60)]))).toEqual({ state: 'done' });
  });

  it('an event of a past round changes nothing: no round is ever put back', () => {
    const redriven = run(enqueued, [{ kind: 'redriven', round: 3, runsAt: at(5) }, at(5)]);
    expect(redriven).toMatchObject({ round: 3, due_at: dueAt(at(5)) });
    const stale: PartEvent[] = [
      { kind: 'enqueued', round: 2, runsAt: at(6) },
      { kind: 'redriven', round: 3, runsAt: at(6) },
      { kind: 'retry', round: 2, code: 'mailerlite 401', reason: 'configuration' },
      { kind: 'waits', round: 3, runsAt: at(60) },
    ];
    for (const event of stale) expect(next(redriven, event, at(6))).toBeNull();
    // What the person did is true whatever the round: a late task's done or skip still ends the part.
    expect(next(redriven, { kind: 'done', round: 2 }, at(6))).toMatchObject({ state: 'done', round: 3 });
  });

  it("a task of a later round than the part's (its enqueuer died before writing) moves the part to it", () => {
    const retried = run(enqueued, [{ kind: 'retry', round: 1, code: 'mailerlite 503' }, at(1)]);
    expect(retried).toMatchObject({ round: 1, attempts: 1 });
    expect(next(retried, { kind: 'retry', round: 0, code: 'x' }, at(2))).toBeNull();
  });

  it("the operator's Sync hands the next round only to a pending part whose task ran and failed, or is overdue", () => {
    // Its first task on its way: another round would only queue behind it.
    expect(syncRound(enqueued, at(1))).toBeNull();
    expect(syncRound(firstPart(T0), at(1))).toBeNull();
    // Never confirmed in Cloud Tasks, and due: the next round.
    expect(syncRound(firstPart(T0), T0 + CONFIRM_WAIT_MS)).toBe(1);
    // A task that ran and failed (our setup refused, or MailerLite was down): the next round, at once.
    const refused = run(enqueued, [
      { kind: 'retry', round: 0, code: 'mailerlite 401', reason: 'configuration' },
      at(1),
    ]);
    expect(syncRound(refused, at(2))).toBe(1);
    // Settled: none, whatever the round (a done contact is in MailerLite; a skipped one is the person's).
    expect(syncRound(run(enqueued, [{ kind: 'done', round: 0 }, at(1)]), at(2))).toBeNull();
    expect(
      syncRound(run(enqueued, [{ kind: 'skipped', round: 0, reason: 'suppressed' }, at(1)]), at(2)),
    ).toBeNull();
  });

  it("a stored part is parsed: a junk row's `delivery` is no part", () => {
    expect(parsePart(enqueued)).toBe(enqueued);
    for (const junk of [undefined, null, 'garbage', { state: 'lost' }, { state: 'pending', round: 1 }, {}]) {
      expect(parsePart(junk)).toBeNull();
    }
  });
});
