import { positiveNumber, RETRY, retryWindowMs } from './queue';

/**
 * The life of one part of a sign-up's delivery (`delivery.contact`, `delivery.thank_you`; the row is the
 * outbox, delivery/row-delivery.ts), in one place. The trigger, the two workers, the reconciler and the
 * operator's Sync say what happened (an event) and write what `next` answers on the row as it stands
 * (compare-and-swap); none of them writes a part's fields itself.
 *
 * The states, as a newcomer reads them:
 *
 *   pending    its task is on its way (`round` names the task, delivery/queue.ts)
 *   waiting    still pending, and saying why on the row: `reason` (`configuration`: our setup or the
 *              service refused us; `mail_budget`: its round runs in a later hour, on the slot of the
 *              mail budget booked for it, mail/budget.ts) and `last_error` (the last code)
 *   done       delivered
 *   skipped    ended for a reason about the person, and only those (SkipReason)
 *
 * As stored, `waiting` is `state: 'pending'` with a `reason`: a part that waits is still pending, and is
 * retried until it is delivered or the person ends it. The events:
 *
 *   enqueued(round)        the round's task is confirmed in Cloud Tasks: due long after (dueAt)
 *   redriven(round)        the reconciler or the operator's Sync (syncRound) enqueued a later round: that
 *                          round, due long after
 *   retry(round, code)     an attempt failed and Cloud Tasks retries it (backoff at most 10 minutes); with
 *                          `configuration` when our setup or the service refused us (waiting); due at the
 *                          latest when that task's retries from now would have ended (GIVE_UP_SLACK_MS)
 *   waits(round, runsAt)   over the mail budget: the worker booked a slot in a later hour and enqueued this
 *                          (next) round to run at that hour's start, `runsAt`: due long after, as `enqueued`
 *   done(round)            delivered
 *   skipped(round, why)    the person's reason: final
 *
 * Rules: `done` and `skipped` are final; nothing moves them. Every other event is of a round, and an event of
 * a round older than the part's is stale and changes nothing (a task of a past round does nothing); an
 * event of a later round (a task whose enqueuer died before writing its round) moves the part to it.
 */

export type PartState = 'pending' | 'done' | 'skipped';

/**
 * Why a part was skipped, always about the person: the mailbox unsubscribed (`suppressed`); it was
 * thanked before (`already_thanked`, one thank-you per mailbox, ever); its own mailbox was refused
 * (`refused`: the relay refused that recipient, 5.1.1, 5.1.2, 5.1.3, 5.1.6 or 5.2.1 at RCPT; MailerLite
 * answered 422 on the address);
 * the row holds no address the grammar accepts (`not_an_address`, which the rules let none in). Our
 * setup, a service or a stranger never skips a part.
 */
export type SkipReason = 'suppressed' | 'already_thanked' | 'refused' | 'not_an_address';

/**
 * Why a part still pending waits: our setup or the service refused us (`configuration`: the relay's
 * refusal of our sender or login, TLS, a message policy, MailerLite's 401/403/404 or an undocumented
 * answer, a missing setting; retried until an operator fixed it), or the hour of its slot of the mail budget (mail/budget.ts).
 */
export type WaitReason = 'mail_budget' | 'configuration';

/** A stored time: a Date as written, a Timestamp as read back. */
export type StoredTime = Date | { toMillis(): number };

export interface PartRecord {
  state: PartState;
  reason?: SkipReason | WaitReason;
  attempts: number;
  last_error?: string;
  round: number;
  due_at?: StoredTime;
  updated_at: StoredTime;
}

export type PartEvent =
  | { kind: 'enqueued'; round: number; runsAt: number }
  | { kind: 'redriven'; round: number; runsAt: number }
  | { kind: 'retry'; round: number; code: string; reason?: 'configuration' }
  | { kind: 'waits'; round: number; runsAt: number }
  | { kind: 'done'; round: number }
  | { kind: 'skipped'; round: number; reason: SkipReason };

/**
 * How long a task may wait in its queue before its first attempt, beyond its retry window, before the
 * reconciler takes its part for given up: a rush queued at MailerLite's pace (115 a minute) is through six
 * hours of backlog in 41,400 sign-ups. A part re-driven early costs one dispatch more; its worker finds the
 * part settled or the mailbox's record, and spends no MailerLite request nor a second mail.
 * DELIVERY_QUEUE_WAIT_SECONDS overrides it, read when the functions load (the stack tests shorten it).
 */
export const QUEUE_WAIT_MS = positiveNumber(process.env.DELIVERY_QUEUE_WAIT_SECONDS, 6 * 60 * 60) * 1000;

/**
 * The due time of a round whose task is not confirmed yet (the trigger has written the part, and its enqueue
 * has not answered): short, so that an enqueue that fails after the trigger's transaction committed (Cloud
 * Tasks down, the Enqueuer grant missing on a first deploy) is re-driven by the reconciler, which runs every
 * 10 minutes, within 15 minutes of the commit, not when the task's retry window would have ended.
 * DELIVERY_CONFIRM_SECONDS overrides it, read when the functions load.
 */
export const CONFIRM_WAIT_MS = positiveNumber(process.env.DELIVERY_CONFIRM_SECONDS, 4 * 60) * 1000;

/**
 * How long after a task that has run may have given up the reconciler looks at its part: with its run every
 * 10 minutes, a part whose task gave up is re-driven within 15 minutes of it.
 */
export const GIVE_UP_SLACK_MS = 5 * 60_000;

function millis(time: StoredTime): number {
  return time instanceof Date ? time.getTime() : time.toMillis();
}

/** When the reconciler looks again at a part whose task is enqueued (confirmed) to run at `runsAt`. */
export function dueAt(runsAt: number): Date {
  return new Date(runsAt + QUEUE_WAIT_MS + retryWindowMs(RETRY));
}

/**
 * A part as the trigger first writes it: pending on round 0, its task not confirmed yet, so due soon
 * (CONFIRM_WAIT_MS). The trigger's `enqueued` moves the due time on once Cloud Tasks has the task.
 */
export function firstPart(now: number): PartRecord {
  return {
    state: 'pending',
    attempts: 0,
    round: 0,
    due_at: new Date(now + CONFIRM_WAIT_MS),
    updated_at: new Date(now),
  };
}

/** Whether the part is settled: done, or skipped for good. A part never written, or pending, is not. */
export function isSettled(part: PartRecord | null): boolean {
  return part?.state === 'done' || part?.state === 'skipped';
}

/** The part as a newcomer reads it (the module's comment): pending, waiting, done or skipped. */
export type PartLife =
  | { state: 'pending'; round: number }
  | { state: 'waiting'; round: number; reason: WaitReason; code?: string }
  | { state: 'done' }
  | { state: 'skipped'; reason: SkipReason };

export function lifeOf(part: PartRecord): PartLife {
  if (part.state === 'done') return { state: 'done' };
  if (part.state === 'skipped') return { state: 'skipped', reason: part.reason as SkipReason };
  if (part.reason === 'mail_budget' || part.reason === 'configuration') {
    return {
      state: 'waiting',
      round: part.round,
      reason: part.reason,
      ...(part.last_error ? { code: part.last_error } : {}),
    };
  }
  return { state: 'pending', round: part.round };
}

/**
 * The round the operator's Sync (callables/sync-callable.ts) hands a contact part now, or null for none. A
 * settled part gets none: `done`, MailerLite has the contact, and its mailbox's record names the groups (a
 * task of any later round finds the part settled and costs no request); `skipped`, the person ended it. A
 * pending part whose first task is still on its way (it never ran, and its due time has not passed) gets none
 * either: another round would only queue behind it at MailerLite's pace. Any other pending part (a task ran and
 * failed, and waits out Cloud Tasks' backoff, perhaps for our setup; or its due time passed) gets its next
 * round, enqueued before the part moves to it (its `redriven`, as the reconciler's), so an operator who fixed
 * the setup sees it delivered at once rather than at its next retry.
 */
export function syncRound(part: PartRecord, now: number): number | null {
  if (part.state !== 'pending') return null;
  const due = part.due_at ? millis(part.due_at) : Number.POSITIVE_INFINITY;
  if (part.attempts === 0 && due > now) return null;
  return part.round + 1;
}

/**
 * The part after `event` at `now`, or null when the event changes nothing: the part is final, or the event
 * is of a past round. Pure: the callers read the part and write the answer only if the row is unchanged
 * (delivery/row-delivery.ts, RowDelivery.apply).
 */
export function next(part: PartRecord, event: PartEvent, now: number): PartRecord | null {
  if (isSettled(part)) return null;
  const updated_at = new Date(now);
  switch (event.kind) {
    case 'done':
      return settled({
        ...part,
        state: 'done',
        round: Math.max(part.round, event.round),
        attempts: part.attempts + 1,
        updated_at,
      });
    case 'skipped':
      return settled({
        ...part,
        state: 'skipped',
        reason: event.reason,
        round: Math.max(part.round, event.round),
        attempts: part.attempts + 1,
        updated_at,
      });
    case 'enqueued':
      if (event.round < part.round) return null;
      return { ...part, round: event.round, due_at: dueAt(event.runsAt), updated_at };
    case 'redriven': {
      // Only forward: a round somebody else moved the part to is theirs.
      if (event.round <= part.round) return null;
      const { reason: _reason, ...rest } = part;
      return { ...rest, round: event.round, due_at: dueAt(event.runsAt), updated_at };
    }
    case 'retry': {
      if (event.round < part.round) return null;
      const { reason: _reason, ...rest } = part;
      // The task has run: it gives up once its retry window from now has passed at the latest, so the
      // reconciler looks again soon after that, not after the queue's wait as well.
      const givesUp = now + retryWindowMs(RETRY) + GIVE_UP_SLACK_MS;
      const due = part.due_at ? millis(part.due_at) : givesUp;
      return {
        ...rest,
        ...(event.reason ? { reason: event.reason } : {}),
        round: event.round,
        attempts: part.attempts + 1,
        last_error: event.code,
        due_at: new Date(Math.min(due, givesUp)),
        updated_at,
      };
    }
    case 'waits':
      // Only forward: a second delivery of the task that waited too names the same round, and changes nothing.
      if (event.round <= part.round) return null;
      return {
        ...part,
        reason: 'mail_budget',
        round: event.round,
        attempts: part.attempts + 1,
        due_at: dueAt(event.runsAt),
        updated_at,
      };
  }
}

/** A final part: no due time, and a skip's reason or none. */
function settled(part: PartRecord): PartRecord {
  const { due_at: _due, reason, ...rest } = part;
  return part.state === 'skipped' && reason ? { ...rest, reason } : rest;
}
