import type { DocumentReference, DocumentSnapshot } from 'firebase-admin/firestore';
import { firestoreSdk } from '../firestore';
import {
  deliveryTaskId,
  type Enqueue,
  positiveNumber,
  QUEUES,
  type QueueName,
  RETRY,
  type RowOfTasks,
  retryWindowMs,
} from './queue';

/**
 * The row is the outbox (as Firebase's firestore-send-email keeps `delivery` on its mail document): each
 * sign-up carries the state of its two deliveries, written by the server alone (the rules let a client
 * create the four fields and nothing else) and erased with the row:
 *
 *   delivery.contact    the MailerLite contact (tasks/deliver-contact.ts)
 *   delivery.thank_you  the thank-you mail (tasks/deliver-thank-you.ts)
 *
 * each `{ state, reason?, attempts, last_error?, round, due_at?, updated_at }`. `pending` until its worker
 * settles it `done` or `skipped` (with the reason); `attempts` counts the worker's runs, `last_error` the
 * last failure's code; `round` the task the part is on (each round has its own task id, tasks/queue.ts);
 * `due_at`, while pending, when the reconciler (scheduled/reconcile-deliveries.ts) looks at the part again:
 * by then its task has either settled it or given up.
 */
export const DELIVERY = 'delivery';

export type DeliveryPart = 'contact' | 'thank_you';
export const DELIVERY_PARTS: readonly DeliveryPart[] = ['contact', 'thank_you'];
export const PART_QUEUE: Record<DeliveryPart, QueueName> = {
  contact: QUEUES.contact,
  thank_you: QUEUES.thankYou,
};

export type PartState = 'pending' | 'done' | 'skipped';
/**
 * Why a part was skipped: the mailbox unsubscribed; the mailbox was thanked before (one thank-you per
 * mailbox, ever); MailerLite or the mail relay refused the address for good; the row is not a sign-up the
 * grammar accepts (none the rules let in).
 */
export type SkipReason = 'suppressed' | 'already_thanked' | 'refused' | 'not_an_address';
/** Why a part still pending waits: for the next hour's mail budget, or for an operator to fix our setup. */
export type WaitReason = 'mail_budget' | 'configuration';

export interface PartRecord {
  state: PartState;
  reason?: SkipReason | WaitReason;
  attempts: number;
  last_error?: string;
  round: number;
  due_at?: Date;
  updated_at: Date;
}

/**
 * How long a task may wait in its queue before its first attempt, beyond its retry window, before the
 * reconciler takes its part for given up: a rush queued at MailerLite's pace (115 a minute) is through six
 * hours of backlog in 41,400 sign-ups. A part re-driven early costs one dispatch more; its worker finds the
 * part settled or the mailbox's record, and spends no MailerLite request nor a second mail.
 * DELIVERY_QUEUE_WAIT_SECONDS overrides it, read when the functions load (the stack tests shorten it).
 */
export const QUEUE_WAIT_MS = positiveNumber(process.env.DELIVERY_QUEUE_WAIT_SECONDS, 6 * 60 * 60) * 1000;

/**
 * How long a part refused for our own setup (MailerLite's key, a group or field; the relay refusing our
 * login) waits before the reconciler tries it again: an operator's fix takes effect without anyone pressing
 * Sync.
 */
export const CONFIGURATION_WAIT_MS = 60 * 60_000;

/** When the reconciler looks again at a part enqueued now to run at `runsAt`. */
export function dueAt(runsAt: number): Date {
  return new Date(runsAt + QUEUE_WAIT_MS + retryWindowMs(RETRY));
}

/** A part's record when its round `round` is enqueued to run at `runsAt`. */
export function pendingPart(round: number, runsAt: number, now: number): PartRecord {
  return {
    state: 'pending',
    attempts: 0,
    round,
    due_at: dueAt(runsAt),
    updated_at: new Date(now),
  };
}

/** Whether the part is settled: done, or skipped for good. A part never written, or pending, is not. */
export function isSettled(part: PartRecord | null): boolean {
  return part?.state === 'done' || part?.state === 'skipped';
}

/** The part as stored, or null for a row the trigger has not reached. */
export function partOf(data: Record<string, unknown> | undefined, part: DeliveryPart): PartRecord | null {
  const delivery = data?.[DELIVERY] as Partial<Record<DeliveryPart, PartRecord>> | undefined;
  return delivery?.[part] ?? null;
}

/**
 * Enqueues round `round` of a part of a row's delivery (tasks/queue.ts, deliveryTaskId): by the trigger
 * (round 0), the reconciler and the mail budget's wait (the next one).
 */
export type EnqueuePart = (
  part: DeliveryPart,
  row: RowOfTasks,
  round: number,
  notBefore?: number,
) => Promise<'enqueued' | 'duplicate'>;

export function enqueuePart(enqueue: Enqueue, mailboxSecret: string): EnqueuePart {
  return (part, row, round, notBefore) => {
    const queue = PART_QUEUE[part];
    const id = deliveryTaskId(mailboxSecret, queue, row, round);
    return enqueue(queue, { signup: row.id }, notBefore === undefined ? { id } : { id, notBefore });
  };
}

/** A row as read, as its tasks are named (tasks/queue.ts, deliveryTaskId). */
export function rowOfTasks(row: DocumentSnapshot): RowOfTasks {
  if (!row.createTime) throw new Error('A row read without its creation time.');
  return { id: row.id, createTime: row.createTime };
}

/**
 * The row's delivery state, as one worker sees its part: each write touches only its own part, so the two
 * workers of one row never overwrite each other. A row erased meanwhile (one-click unsubscribe, retention)
 * is left erased: the write is dropped.
 */
export class RowDelivery {
  constructor(
    readonly ref: DocumentReference,
    private readonly part: DeliveryPart,
  ) {}

  /** The part is done (`done`) or will not be done (`skipped`, with why): one attempt more, no due time. */
  async settle(state: 'done' | 'skipped', now: number, reason?: SkipReason): Promise<void> {
    const { FieldValue } = await firestoreSdk();
    await this.write({
      state,
      reason: reason ?? FieldValue.delete(),
      attempts: FieldValue.increment(1),
      due_at: FieldValue.delete(),
      updated_at: new Date(now),
    });
  }

  /** An attempt that failed and will be retried by Cloud Tasks: counted, with its code. */
  async failed(code: string, now: number): Promise<void> {
    const { FieldValue } = await firestoreSdk();
    await this.write({ attempts: FieldValue.increment(1), last_error: code, updated_at: new Date(now) });
  }

  /**
   * The part waits, still pending, for round `round` (already enqueued to run at `runsAt`), or for an
   * operator (`configuration`: no task; the reconciler looks again at `runsAt`).
   */
  async waits(reason: WaitReason, round: number, runsAt: number, now: number, code?: string): Promise<void> {
    const { FieldValue } = await firestoreSdk();
    await this.write({
      reason,
      round,
      attempts: FieldValue.increment(1),
      ...(code ? { last_error: code } : {}),
      due_at: reason === 'configuration' ? new Date(runsAt) : dueAt(runsAt),
      updated_at: new Date(now),
    });
  }

  private async write(fields: Record<string, unknown>): Promise<void> {
    const update: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(fields)) update[`${DELIVERY}.${this.part}.${field}`] = value;
    try {
      await this.ref.update(update);
    } catch (error) {
      // 5 NOT_FOUND: the row was erased while its task ran; nothing is left to record.
      if ((error as { code?: unknown }).code !== 5) throw error;
    }
  }
}
