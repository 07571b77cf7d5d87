import type { DocumentReference, DocumentSnapshot } from 'firebase-admin/firestore';
import { next, type PartEvent, type PartRecord } from './part-life';
import {
  deliveryTaskId,
  type Enqueue,
  QUEUES,
  type QueueName,
  type RetryLater,
  type RowOfTasks,
  type SignupTask,
} from './queue';

/**
 * The row is the outbox (as Firebase's firestore-send-email keeps `delivery` on its mail document): each
 * sign-up carries the state of its two deliveries, written by the server alone (the rules let a client
 * create the four fields and nothing else) and erased with the row:
 *
 *   delivery.contact    the MailerLite contact (delivery/deliver-contact.ts)
 *   delivery.thank_you  the thank-you mail (delivery/deliver-thank-you.ts)
 *
 * each `{ state, reason?, attempts, last_error?, round, due_at?, updated_at }`, moved only as its life says
 * (delivery/part-life.ts): `pending` (waiting, with a reason, while our setup or the mail budget holds it) until
 * its worker settles it `done` or `skipped` (for the person's reason); `attempts` counts the worker's runs,
 * `last_error` the last failure's code; `round` the task the part is on (each round has its own task id,
 * delivery/queue.ts, and the task carries its round); `due_at`, while pending, when the reconciler
 * (delivery/reconcile-deliveries.ts) looks at the part again: soon while its task is not confirmed, and
 * otherwise once that task has either settled it or given up.
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

/** The part as stored, or null for a row the trigger has not reached. */
export function partOf(data: Record<string, unknown> | undefined, part: DeliveryPart): PartRecord | null {
  const delivery = data?.[DELIVERY] as Partial<Record<DeliveryPart, PartRecord>> | undefined;
  return delivery?.[part] ?? null;
}

/**
 * Enqueues round `round` of a part of a row's delivery (delivery/queue.ts, deliveryTaskId): by the trigger
 * (round 0), the reconciler, and a thank-you's worker for its next round: over the mail budget (to run in its slot's hour) or whose save failed.
 */
export type EnqueuePart = (
  part: DeliveryPart,
  row: RowOfTasks,
  round: number,
  notBefore?: number,
  /** What the round's task carries besides the row and its round (delivery/queue.ts, SignupTask). */
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

/** A row as read, as its tasks are named (delivery/queue.ts, deliveryTaskId). */
export function rowOfTasks(row: DocumentSnapshot): RowOfTasks {
  if (!row.createTime) throw new Error('A row read without its creation time.');
  return { id: row.id, createTime: row.createTime };
}

/**
 * One part of a row's delivery, as its trigger, worker or reconciler moves it: each says what happened
 * (delivery/part-life.ts, PartEvent) and `apply` writes what `next` answers on the row as it stands (applyToParts),
 * so a write made on a stale read (a round the reconciler moved on meanwhile) cannot put a part back. Each write touches only
 * its own part, so the two workers of one row never overwrite each other. A row erased meanwhile (one-click
 * unsubscribe, retention) is left erased: nothing is written.
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

  /**
   * Records a failed attempt of `round` that Cloud Tasks will retry (its code, and `configuration` when our
   * setup or the service refused us), as far as the database lets it: the worker throws `retry` next either way.
   */
  async recordRetry(round: number, retry: RetryLater, now: number): Promise<void> {
    await this.apply(
      { kind: 'retry', round, code: retry.code, ...(retry.wait ? { reason: retry.wait } : {}) },
      now,
    ).catch(() => undefined);
  }
}

/**
 * Several parts' events on one row in one write (the trigger confirms both of its tasks at once): each part
 * after its event, null where nothing changed. Read, then written only if nobody wrote the row since
 * (compare-and-swap on its update time, read again on a conflict): no transaction, whose lock two workers
 * finishing the same row at once would wait on.
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
