import type { DocumentReference, DocumentSnapshot, Firestore } from 'firebase-admin/firestore';
import type { Clock } from '../clock';
import { SIGNUPS } from '../contract';
import type { Logger } from '../logs';
import { isSettled, next, type PartEvent, type PartRecord, parsePart } from './part-life';
import {
  deliveryTaskId,
  type Enqueue,
  parseSignupTask,
  parseTask,
  QUEUES,
  type QueueName,
  type RetryLater,
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

export {
  CONFIRM_WAIT_MS,
  dueAt,
  firstPart,
  isSettled,
  type PartEvent,
  type PartRecord,
  type PartState,
  QUEUE_WAIT_MS,
  type SkipReason,
  type WaitReason,
} from './part-life';

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
    const payload: SignupTask = { signup: row.id, round, ...carry };
    return enqueue(queue, payload, notBefore === undefined ? { id } : { id, notBefore });
  };
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
  async apply(event: PartEvent, now: number): Promise<PartRecord | null> {
    const [moved] = await applyToParts(this.ref, [[this.part, event]], now);
    return moved ?? null;
  }

  /** Records a failed attempt, as far as the database lets it: the worker throws `retry` next either way. */
  async recordRetry(round: number, retry: RetryLater, now: number): Promise<void> {
    await this.apply(
      { kind: 'retry', round, code: retry.code, ...(retry.wait ? { reason: retry.wait } : {}) },
      now,
    ).catch(() => undefined);
  }
}

/**
 * Several parts' events on one row in one write, compare-and-swap on its update time: a transaction's lock
 * would make two workers finishing one row wait on each other.
 */
export async function applyToParts(
  ref: DocumentReference,
  events: ReadonlyArray<readonly [DeliveryPart, PartEvent]>,
  now: number,
): Promise<Array<PartRecord | null>> {
  for (let attempt = 1; ; attempt += 1) {
    const row = await ref.get();
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
  input: SignupTask;
  row: DocumentSnapshot;
  round: number;
  stored: T;
  delivery: RowDelivery;
  apply: (event: PartEvent) => Promise<PartRecord | null>;
}

/** Why a task has nothing to deliver: `not_an_address` has skipped its part. */
export type Unopened = 'malformed' | 'gone' | 'settled' | 'stale' | 'not_an_address';

const OPEN_EVENTS = {
  contact: { malformed: 'add_contact.task_malformed', gone: 'add_contact.signup_gone' },
  thank_you: { malformed: 'thank_you.task_malformed', gone: 'thank_you.signup_gone' },
} as const;

/**
 * Both workers' first steps: the task, its row, its part (settled or of a past round: nothing to do), the
 * stored address. `beforePart` runs once the row is read, before the part is looked at.
 */
export async function openTask<T>(
  task: unknown,
  part: DeliveryPart,
  deps: { db: Firestore; logger: Logger; clock: Clock },
  parseStored: (row: DocumentSnapshot) => T,
  beforePart?: (input: SignupTask, row: DocumentSnapshot) => Promise<void>,
): Promise<OpenedTask<T> | Unopened> {
  const input = parseTask(task, parseSignupTask, deps.logger, OPEN_EVENTS[part].malformed);
  if (!input) return 'malformed';
  const row = await withDatabase(() => deps.db.collection(SIGNUPS).doc(input.signup).get());
  if (!row.exists) {
    deps.logger.info(OPEN_EVENTS[part].gone, {});
    return 'gone';
  }
  await beforePart?.(input, row);
  const current = partOf(row.data(), part);
  if (isSettled(current)) return 'settled';
  if (current && input.round < current.round) return 'stale';
  const round = input.round;
  const delivery = new RowDelivery(row.ref, part);
  const apply = (event: PartEvent) => withDatabase(() => delivery.apply(event, deps.clock.now()));
  let stored: T;
  try {
    stored = parseStored(row);
  } catch {
    await apply({ kind: 'skipped', round, reason: 'not_an_address' });
    return 'not_an_address';
  }
  return { input, row, round, stored, delivery, apply };
}
