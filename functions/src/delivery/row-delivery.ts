import type { DocumentReference, DocumentSnapshot, Firestore } from 'firebase-admin/firestore';
import type { Clock } from '../clock';
import { SIGNUPS } from '../contract';
import type { Logger } from '../logs';
import { type AddContactInput, parseAddContactInput } from '../schemas';
import {
  eventOf,
  isSettled,
  next,
  type Outcome,
  type PartEvent,
  type PartRecord,
  parsePart,
} from './part-life';
import {
  deliveryTaskId,
  type Enqueue,
  parseSignupTask,
  parseTask,
  QUEUES,
  type QueueName,
  RetryLater,
  type RowOfTasks,
  type SignupTask,
  withDatabase,
} from './queue';

/**
 * The row is the outbox, as in firestore-send-email: `delivery.contact` and `delivery.thank_you`, each a
 * PartRecord (part-life.ts), written by the server alone and erased with the row.
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
export type EnqueuePart = (
  part: DeliveryPart,
  row: RowOfTasks,
  round: number,
  notBefore?: number,
  carry?: Pick<SignupTask, 'sent'>,
) => Promise<'enqueued' | 'duplicate'>;

export function enqueuePart(enqueue: Enqueue, mailboxSecret: string): EnqueuePart {
  return (part, row, round, notBefore, carry) => {
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
 * One part of a row's delivery: `apply` writes what `next` answers on the row as it stands, touching only its
 * own part, so a stale read cannot put a part back and a row erased meanwhile stays erased.
 */
export class RowDelivery {
  constructor(
    readonly ref: DocumentReference,
    private readonly part: DeliveryPart,
  ) {}

  /** The part after `event` (null: the row is gone or not indexed, or the event changed nothing). */
  async apply(event: PartEvent, now: number, read?: DocumentSnapshot): Promise<PartRecord | null> {
    const [moved] = await applyToParts(this.ref, [[this.part, event]], now, read);
    return moved ?? null;
  }
}

/**
 * Several parts' events on one row in one write, compare-and-swap on its update time: a transaction's lock
 * would make two workers finishing one row wait on each other. `read`, a snapshot the caller holds, saves the
 * first read; a row written since is read again.
 */
export async function applyToParts(
  ref: DocumentReference,
  events: ReadonlyArray<readonly [DeliveryPart, PartEvent]>,
  now: number,
  read?: DocumentSnapshot,
): Promise<Array<PartRecord | null>> {
  for (let attempt = 1; ; attempt += 1) {
    const row = attempt === 1 && read ? read : await ref.get();
    if (!row.exists || !row.updateTime) return events.map(() => null);
    const update: Record<string, PartRecord> = {};
    const moved = events.map(([part, event]) => {
      const current = partOf(row.data(), part);
      const after = current ? next(current, event, now) : null;
      if (after) update[`${DELIVERY}.${part}`] = after;
      return after;
    });
    if (Object.keys(update).length === 0) return moved;
    try {
      await ref.update(update, { lastUpdateTime: row.updateTime });
      return moved;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      // 5 NOT_FOUND: erased meanwhile, nothing to record. 9 FAILED_PRECONDITION: written since it was read.
      if (code === 5) return events.map(() => null);
      if (code !== 9 || attempt >= APPLY_ATTEMPTS) throw error;
    }
  }
}

/** Reads and writes of one event before a conflict on the row is reported as a failure (retried by the task). */
const APPLY_ATTEMPTS = 5;

/** A worker's task, opened: its row, the round it is on, and the address stored there. */
export interface OpenedTask<T> {
  row: DocumentSnapshot;
  round: number;
  stored: T;
}

/** Why a task had nothing to deliver: `dropped`, a malformed task or a row without an address (skipped). */
export type Unopened = 'dropped' | 'gone' | 'settled' | 'stale';

const LOG_PREFIX = { contact: 'add_contact', thank_you: 'thank_you' } as const;

/**
 * Both workers' skeleton: the task, its row, the stored address (`beforePart` runs once it is read), its part
 * (settled or of a past round: nothing to do); then the worker's own delivery step, whose outcome becomes the
 * part's event (eventOf). A failure to retry is recorded on the part and thrown (RetryLater) for Cloud Tasks.
 */
export async function runTask<T>(
  task: unknown,
  part: DeliveryPart,
  deps: { db: Firestore; logger: Logger; clock: Clock },
  parseStored: (row: DocumentSnapshot) => T,
  deliver: (opened: OpenedTask<T>) => Promise<Outcome>,
  beforePart?: (input: SignupTask, stored: T) => Promise<void>,
): Promise<Outcome | Unopened> {
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
  } catch {}
  if (stored !== null) await beforePart?.(input, stored);
  const current = partOf(row.data(), part);
  if (isSettled(current)) return 'settled';
  const round = input.round;
  if (current && round < current.round) return 'stale';
  const delivery = new RowDelivery(row.ref, part);
  const apply = (event: PartEvent) => withDatabase(() => delivery.apply(event, deps.clock.now(), row));
  try {
    if (stored === null) {
      await apply({ kind: 'skipped', round, reason: 'not_an_address' });
      return 'dropped';
    }
    const outcome = await deliver({ row, round, stored });
    const event = eventOf(outcome, round);
    if (event) await apply(event);
    return outcome;
  } catch (error) {
    const retry =
      error instanceof RetryLater ? error : new RetryLater('The database is unavailable.', 'database');
    const { code, wait } = retry;
    const failed: PartEvent = { kind: 'retry', round, code, ...(wait ? { reason: wait } : {}) };
    // As far as the database lets it: the task is retried either way.
    await delivery.apply(failed, deps.clock.now(), row).catch(() => undefined);
    throw retry;
  }
}
