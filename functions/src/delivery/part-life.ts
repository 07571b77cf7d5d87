import type { DocumentReference, DocumentSnapshot, Firestore, Timestamp } from 'firebase-admin/firestore';
import { HttpsError } from 'firebase-functions/v2/https';
import type { Clock } from '../clock';
import { SIGNUPS } from '../contract';
import { millisOf } from '../firestore';
import type { Logger } from '../logs';
import { hourStart } from '../mail/budget';
import { type AddContactInput, parseAddContactInput } from '../schemas';
import {
  deliveryTaskId,
  type Enqueue,
  parseSignupTask,
  parseTask,
  positiveNumber,
  QUEUES,
  type QueueName,
  RETRY,
  RetryLater,
  type RowOfTasks,
  retryWindowMs,
  type SignupTask,
  withDatabase,
} from './queue';

/**
 * The life of one part of a sign-up's delivery (`delivery.contact`, `delivery.thank_you` on the row). Every
 * writer says what happened (an event) and writes what `next` answers, compare-and-swap; none writes a field.
 *
 *   pending    its task (`round`) is on its way
 *   waiting    pending with a `reason`: `configuration` (our setup or the service refused us) or
 *              `mail_budget` (its round runs in a later hour); `last_error` holds the last code
 *   done       delivered
 *   skipped    ended for a reason about the person, and only those (SkipReason)
 *
 *   enqueued(round)        Cloud Tasks confirmed the round's task: due long after (dueAt)
 *   redriven(round)        the reconciler or the Sync enqueued a later round: due long after
 *   retry(round, code)     an attempt failed and is retried; due when its retries would have ended
 *   waits(round, runsAt)   over the budget, the next round enqueued for a later hour: due long after
 *   done, skipped          final: nothing moves them
 *
 * An event of a round older than the part's changes nothing, but for done and skipped (what the person did is
 * true whatever the round); a later round (its enqueuer died before writing it) moves the part to it.
 *
 * Below the pure life: the row that stores both parts and the one writer of a part (applyToParts), then both
 * workers' skeleton (runTask), whose outcome becomes the part's event (eventOf).
 */

/** Why a part was skipped, always about the person: our setup, a service or a stranger never skips one. */
export type SkipReason = 'suppressed' | 'already_thanked' | 'refused' | 'not_an_address';

export interface PartRecord {
  state: 'pending' | 'done' | 'skipped';
  /** Skipped: why (SkipReason). Pending: why it waits, our setup or a service refusing us, or the budget. */
  reason?: SkipReason | 'mail_budget' | 'configuration';
  attempts: number;
  last_error?: string;
  round: number;
  /** Written as a Date, read back as a Timestamp. */
  due_at?: Date | Timestamp;
  updated_at: Date | Timestamp;
}

export type PartEvent =
  | { kind: 'enqueued' | 'redriven' | 'waits'; round: number; runsAt: number }
  | { kind: 'retry'; round: number; code: string; reason?: 'configuration' }
  | { kind: 'done'; round: number }
  | { kind: 'skipped'; round: number; reason: SkipReason };

/**
 * How long a task may sit in its queue before the reconciler takes it for given up: six hours is 41,400
 * sign-ups at MailerLite's pace; one re-driven early costs a dispatch, never a request or a second mail.
 */
export const QUEUE_WAIT_MS = positiveNumber(process.env.DELIVERY_QUEUE_WAIT_SECONDS, 6 * 60 * 60) * 1000;

/** Due time of a round whose enqueue has not answered: short, so a failed one is re-driven within 15 min. */
export const CONFIRM_WAIT_MS = positiveNumber(process.env.DELIVERY_CONFIRM_SECONDS, 4 * 60) * 1000;

/** With the reconciler every 10 minutes, a part whose task gave up is re-driven within 15 minutes. */
export const GIVE_UP_SLACK_MS = 5 * 60_000;

/** When the reconciler looks again at a part whose task is enqueued (confirmed) to run at `runsAt`. */
export function dueAt(runsAt: number): Date {
  return new Date(runsAt + QUEUE_WAIT_MS + retryWindowMs(RETRY));
}

/** A part as the trigger first writes it: round 0, due soon until its task is confirmed. */
export function firstPart(now: number): PartRecord {
  return {
    state: 'pending',
    attempts: 0,
    round: 0,
    due_at: new Date(now + CONFIRM_WAIT_MS),
    updated_at: new Date(now),
  };
}

/** A stored part, parsed: null when `value` is none (absent, or a junk row's). */
export function parsePart(value: unknown): PartRecord | null {
  const { state, round, attempts } = (value ?? {}) as Partial<PartRecord>;
  const known = state === 'pending' || state === 'done' || state === 'skipped';
  return known && Number.isSafeInteger(round) && Number.isSafeInteger(attempts)
    ? (value as PartRecord)
    : null;
}

/** Whether the part is settled: done, or skipped for good. A part never written, or pending, is not. */
export function isSettled(part: PartRecord | null): boolean {
  return part?.state === 'done' || part?.state === 'skipped';
}

/** The part as a newcomer reads it (the module's comment): pending, waiting, done or skipped. */
export function lifeOf({ state, round, reason, last_error: code }: PartRecord) {
  if (state === 'done') return { state };
  if (state === 'skipped') return { state, reason: reason as SkipReason };
  if (reason === 'mail_budget' || reason === 'configuration') {
    return { state: 'waiting' as const, round, reason, ...(code ? { code } : {}) };
  }
  return { state, round };
}

/**
 * What either worker's delivery step came to, in one vocabulary (a failure to retry is thrown instead):
 * `already_delivered`, this row's went out before (a duplicate task, a later round); `already_thanked`, another
 * row's thank-you to the mailbox stands for it; `sent_unsaved`, a mail the relay accepted and the database did
 * not save (its next round, enqueued, saves it); `{ waiting }`, over the mail budget, its next round enqueued to
 * run at the start of that budget hour.
 */
export type Outcome =
  | 'delivered'
  | 'already_delivered'
  | 'already_thanked'
  | 'suppressed'
  | 'refused'
  | 'sent_unsaved'
  | { waiting: number };

/**
 * The event an outcome of round `round` is: delivered (by this task or before) is done, the person's own reasons
 * skip, a wait waits; `sent_unsaved` none (its next round, enqueued, settles the part).
 */
export function eventOf(outcome: Outcome, round: number): PartEvent | null {
  if (typeof outcome === 'object')
    return { kind: 'waits', round: round + 1, runsAt: hourStart(outcome.waiting) };
  if (outcome === 'delivered' || outcome === 'already_delivered') return { kind: 'done', round };
  return outcome === 'sent_unsaved' ? null : { kind: 'skipped', round, reason: outcome };
}

/**
 * The round the operator's Sync hands a contact part, or null: none to a settled part, nor to one whose first
 * task has not run yet (it would only queue behind it). A part that failed gets its next round now: a fixed
 * setup is delivered at once rather than at the next backoff.
 */
export function syncRound(part: PartRecord, now: number): number | null {
  if (part.state !== 'pending') return null;
  const due = part.due_at ? millisOf(part.due_at) : Number.POSITIVE_INFINITY;
  if (part.attempts === 0 && due > now) return null;
  return part.round + 1;
}

/** The part after `event`, or null when it changes nothing (final part, past round). Pure. */
export function next(part: PartRecord, event: PartEvent, now: number): PartRecord | null {
  if (isSettled(part)) return null;
  const { due_at: due, reason: _reason, ...rest } = part;
  const updated_at = new Date(now);
  switch (event.kind) {
    case 'done':
    case 'skipped':
      // What the person did is true whatever the round: a late task's end still ends the part.
      return {
        ...rest,
        state: event.kind,
        ...(event.kind === 'skipped' ? { reason: event.reason } : {}),
        round: Math.max(part.round, event.round),
        attempts: part.attempts + 1,
        updated_at,
      };
    case 'enqueued':
    case 'redriven':
    case 'waits':
      // Only forward, but for the round's own confirmation: a round somebody else moved the part to is theirs,
      // and a second delivery of the task that waited names the same round.
      if (event.round < part.round || (event.kind !== 'enqueued' && event.round === part.round)) return null;
      return {
        ...(event.kind === 'enqueued' ? part : rest),
        ...(event.kind === 'waits' ? { reason: 'mail_budget', attempts: part.attempts + 1 } : {}),
        round: event.round,
        due_at: dueAt(event.runsAt),
        updated_at,
      };
    case 'retry': {
      if (event.round < part.round) return null;
      // The task has run, so no queue wait: due when its retries from now would end.
      const givesUp = now + retryWindowMs(RETRY) + GIVE_UP_SLACK_MS;
      return {
        ...rest,
        ...(event.reason ? { reason: event.reason } : {}),
        round: event.round,
        attempts: part.attempts + 1,
        last_error: event.code,
        due_at: new Date(Math.min(due ? millisOf(due) : givesUp, givesUp)),
        updated_at,
      };
    }
  }
}

/**
 * The row is the outbox, as in firestore-send-email: `delivery.contact` and `delivery.thank_you`, each a
 * PartRecord, written by the server alone and erased with the row.
 */
export const DELIVERY = 'delivery';

export type DeliveryPart = 'contact' | 'thank_you';
export const DELIVERY_PARTS: readonly DeliveryPart[] = ['contact', 'thank_you'];
export const PART_QUEUE: Record<DeliveryPart, QueueName> = {
  contact: QUEUES.contact,
  thank_you: QUEUES.thankYou,
};

/** The part as stored, or null for a row the trigger has not reached (or a junk row). */
export function partOf(data: Record<string, unknown> | undefined, part: DeliveryPart): PartRecord | null {
  return parsePart((data?.[DELIVERY] as Record<string, unknown> | undefined)?.[part]);
}

/** Enqueues one round of a part under its own task id (deliveryTaskId). */
export type EnqueuePart = ReturnType<typeof enqueuePart>;

export function enqueuePart(enqueue: Enqueue, mailboxSecret: string) {
  return (
    part: DeliveryPart,
    row: RowOfTasks,
    round: number,
    notBefore?: number,
    carry?: { sent: string },
  ) => {
    const queue = PART_QUEUE[part];
    const id = deliveryTaskId(mailboxSecret, queue, row, round);
    return enqueue(queue, { signup: row.id, round, ...carry }, { id, notBefore });
  };
}

/** The address a row stores, its list and source: what is delivered, never what a task or caller says. */
export function storedAddress(row: DocumentSnapshot): AddContactInput {
  return parseAddContactInput({
    email: row.get('email'),
    subscription_type: row.get('subscription_type'),
    source: row.get('source'),
  });
}

/** A row as read, as its tasks are named. */
export function rowOfTasks(row: DocumentSnapshot): RowOfTasks {
  if (!row.createTime) throw new Error('A row read without its creation time.');
  return { id: row.id, createTime: row.createTime };
}

/**
 * Writes what `next` answers to each part's event on the row as it stands, in one write, touching only those
 * parts: a stale read cannot put a part back, and a row erased meanwhile stays erased (no part of a row gone or
 * not indexed is written). Compare-and-swap on the row's update time: a transaction's lock would make two
 * workers finishing one row wait on each other. `read`, a snapshot the caller holds, saves the first read; a
 * row written since is read again.
 */
export async function applyToParts(
  ref: DocumentReference,
  events: ReadonlyArray<readonly [DeliveryPart, PartEvent]>,
  now: number,
  read?: DocumentSnapshot,
): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    const row = attempt === 1 && read ? read : await ref.get();
    if (!row.exists || !row.updateTime) return;
    const update: Record<string, PartRecord> = {};
    for (const [part, event] of events) {
      const current = partOf(row.data(), part);
      const after = current ? next(current, event, now) : null;
      if (after) update[`${DELIVERY}.${part}`] = after;
    }
    if (Object.keys(update).length === 0) return;
    try {
      await ref.update(update, { lastUpdateTime: row.updateTime });
      return;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      // 5 NOT_FOUND: erased meanwhile, nothing to record. 9 FAILED_PRECONDITION: written since it was read.
      if (code === 5) return;
      if (code !== 9 || attempt >= APPLY_ATTEMPTS) throw error;
    }
  }
}

/**
 * A later round of a part handed to its queue now (the reconciler's net, the operator's Sync): enqueued first,
 * then recorded on the row it was read from. The other order, or a failed write, could move the due time on with
 * no task behind it; this one leaves the part's due time, the net, where it was.
 */
export async function redrive(
  enqueue: EnqueuePart,
  part: DeliveryPart,
  row: DocumentSnapshot,
  round: number,
  now: number,
): Promise<void> {
  await enqueue(part, rowOfTasks(row), round);
  await applyToParts(row.ref, [[part, { kind: 'redriven', round, runsAt: now }]], now, row);
}

/** Reads and writes of one event before a conflict on the row is reported as a failure (retried by the task). */
const APPLY_ATTEMPTS = 5;

/** Why a task had nothing to deliver: `dropped`, a malformed task or a row without an address (skipped). */
export type Unopened = 'dropped' | 'gone' | 'settled' | 'stale';

const LOG_PREFIX = { contact: 'add_contact', thank_you: 'thank_you' } as const;

/**
 * Both workers' skeleton: the task, its row, the stored address (`beforePart` runs once it is read), its part
 * (settled or of a past round: nothing to do); then the worker's own delivery step, whose outcome becomes the
 * part's event (eventOf). A failure to retry is recorded on the part and thrown (RetryLater) for Cloud Tasks.
 */
export async function runTask<T, O extends Outcome>(
  task: unknown,
  part: DeliveryPart,
  deps: { db: Firestore; logger: Logger; clock: Clock },
  parseStored: (row: DocumentSnapshot) => T,
  /** The worker's delivery step: the row, the round it is on, the address stored there. */
  deliver: (row: DocumentSnapshot, round: number, stored: T) => Promise<O>,
  beforePart?: (input: SignupTask, stored: T) => Promise<void>,
): Promise<O | Unopened> {
  const input = parseTask(task, parseSignupTask, deps.logger, `${LOG_PREFIX[part]}.task_malformed`);
  if (!input) return 'dropped';
  const row = await withDatabase(() => deps.db.collection(SIGNUPS).doc(input.signup).get());
  if (!row.exists) {
    deps.logger.info(`${LOG_PREFIX[part]}.signup_gone`, {});
    return 'gone';
  }
  let stored: T | null = null;
  try {
    stored = parseStored(row);
  } catch (error) {
    // Only what the schema refuses is not an address; anything else (no mailbox key secret) is our setup's.
    if (!(error instanceof HttpsError)) throw error;
  }
  if (stored !== null) await beforePart?.(input, stored);
  const current = partOf(row.data(), part);
  if (isSettled(current)) return 'settled';
  const round = input.round;
  if (current && round < current.round) return 'stale';
  const apply = (event: PartEvent) =>
    withDatabase(() => applyToParts(row.ref, [[part, event]], deps.clock.now(), row));
  try {
    if (stored === null) {
      await apply({ kind: 'skipped', round, reason: 'not_an_address' });
      return 'dropped';
    }
    const outcome = await deliver(row, round, stored);
    const event = eventOf(outcome, round);
    if (event) await apply(event);
    return outcome;
  } catch (error) {
    const retry =
      error instanceof RetryLater ? error : new RetryLater('The database is unavailable.', 'database');
    const failed = { kind: 'retry', round, code: retry.code, reason: retry.wait } as const;
    // As far as the database lets it: the task is retried either way.
    await applyToParts(row.ref, [[part, failed]], deps.clock.now(), row).catch(() => undefined);
    throw retry;
  }
}
