import '../global-options';
import type { DocumentReference, DocumentSnapshot, Firestore } from 'firebase-admin/firestore';
import { onSchedule } from 'firebase-functions/v2/scheduler';
import { type Clock, systemClock } from '../clock';
import { SIGNUPS } from '../contract';
import { adminFirestore, firestoreSdk, millisOf } from '../firestore';
import { cloudLogger, type Logger } from '../logs';
import { releaseTurns } from '../mail/turns';
import { DEFAULTS, intParam, MAIL_PER_HOUR, MAILBOX_KEY_SECRET } from '../params';
import { cloudTasksEnqueue } from '../tasks/queue';
import {
  DELIVERY,
  DELIVERY_PARTS,
  type DeliveryPart,
  type EnqueuePart,
  enqueuePart,
  isSettled,
  partOf,
  RowDelivery,
  rowOfTasks,
} from '../tasks/row-delivery';
import { type IndexSignupDeps, indexSignup } from '../triggers/index-signup';

/** Rows re-driven per part and rows swept, at most, per run; a larger backlog is worked through run by run. */
export const RECONCILE_PER_RUN = 200;

/**
 * How old a row must be before the sweep looks for it: its create trigger normally runs within a second, and
 * retries for a day when Cloud Tasks or the database fail; the sweep is for what it never reached.
 */
export const SWEEP_AFTER_MS = 10 * 60_000;

/** `_delivery/sweep`: how far the sweep has read the sign-ups, by (`created_at`, id). No address. */
export const SWEEP_CURSOR = { collection: '_delivery', id: 'sweep' } as const;

export interface ReconcileDeps {
  db: Firestore;
  clock: Clock;
  logger: Logger;
  enqueuePart: EnqueuePart;
  /** The trigger's work, for a row it never reached (triggers/index-signup.ts). */
  index: (ref: DocumentReference) => ReturnType<typeof indexSignup>;
  /** MAIL_PER_HOUR: what a run may release of the mail budget's lines (mail/turns.ts). */
  mailPerHour: number;
  perRun?: number;
}

export interface ReconcileReport {
  /** Parts whose tasks gave up (or whose wait ended) enqueued again, under their next round. */
  redriven: number;
  /** Rows the trigger never reached, indexed and enqueued now. */
  swept: number;
  /** Thank-yous released from the mail budget's lines in their turn, a slot held (mail/turns.ts). */
  released: number;
}

/**
 * Nothing is dropped while the row lives: the net under the rows' own tasks (the row is the outbox,
 * tasks/row-delivery.ts). Each run
 *
 * 1. re-drives every part still pending whose `due_at` has passed: its task was never confirmed (the
 *    enqueue after the trigger's commit failed: the part's short due time, tasks/part-life.ts) or its tasks
 *    gave up (Cloud Tasks' retry window ran out while MailerLite or the relay was down). The part's next round
 *    is enqueued (a task id Cloud Tasks has not seen) and its due time moved on, in a transaction that moves
 *    the round only forward (the part's `redriven`);
 * 2. sweeps the rows the create trigger never reached (no `delivery` yet: its retries ended, or the local
 *    stack was not running functions when the row was written), after a cursor, and does the trigger's work
 *    for them;
 * 3. releases the thank-yous waiting in the mail budget's lines, oldest first, as far as the hour's budget
 *    goes (mail/turns.ts): each one's next round enqueued with its slot held.
 *
 * Bounded per run (RECONCILE_PER_RUN rows a part, as many swept), logged as counts only, and only when there
 * was something to do. Its one query per part is a range on `delivery.<part>.due_at`, the field
 * firestore.indexes.json keeps indexed (the rest of `delivery` is exempt from indexing).
 */
export async function reconcileDeliveries(deps: ReconcileDeps): Promise<ReconcileReport> {
  const now = deps.clock.now();
  const limit = deps.perRun ?? RECONCILE_PER_RUN;
  const report: ReconcileReport = { redriven: 0, swept: 0, released: 0 };
  for (const part of DELIVERY_PARTS) {
    const field = `${DELIVERY}.${part}.due_at`;
    const due = await deps.db
      .collection(SIGNUPS)
      .where(field, '<=', new Date(now))
      .orderBy(field)
      .limit(limit)
      .get();
    for (const row of due.docs) {
      if (await redrive(row, part, now, deps)) report.redriven += 1;
    }
  }
  report.swept = await sweep(now, limit, deps);
  report.released = await release(now, deps);
  if (report.redriven + report.swept + report.released > 0) {
    deps.logger.info('reconcile.run', {
      redriven: report.redriven,
      swept: report.swept,
      released: report.released,
    });
  }
  return report;
}

/**
 * The mail budget's lines released in their turn (mail/turns.ts): each waiting thank-you's next round enqueued
 * with a slot of this hour held, and its part moved to that round (its `redriven`: forward only).
 */
async function release(now: number, deps: ReconcileDeps): Promise<number> {
  const rows = new Map<string, DocumentSnapshot>();
  const report = await releaseTurns({
    db: deps.db,
    now,
    perHour: deps.mailPerHour,
    logger: deps.logger,
    stillWaiting: async (signup) => {
      const row = await deps.db.collection(SIGNUPS).doc(signup).get();
      rows.set(signup, row);
      return row.exists && !isSettled(partOf(row.data(), 'thank_you'));
    },
    release: async (signup, hour) => {
      const row = rows.get(signup) as DocumentSnapshot;
      const round = (partOf(row.data(), 'thank_you')?.round ?? 0) + 1;
      // Enqueued first, as a re-drive is (above): a write that fails leaves the entry, and the next run enqueues
      // the same round again, a duplicate of that round's own task.
      await deps.enqueuePart('thank_you', rowOfTasks(row), round, undefined, { slot: hour });
      await new RowDelivery(row.ref, 'thank_you').apply({ kind: 'redriven', round, runsAt: now }, now);
    },
  });
  return report.released;
}

async function redrive(row: DocumentSnapshot, part: DeliveryPart, now: number, deps: ReconcileDeps) {
  const record = partOf(row.data(), part);
  // A settled part has no due time (tasks/part-life.ts): only a pending one is found.
  if (record?.state !== 'pending') return false;
  const round = record.round + 1;
  // Enqueued first: should the write below fail, the next run enqueues that round again (the same id, a
  // duplicate, which is that round's own task: the id names the row and the round); the other order could
  // move the due time on with no task behind it. The part's `redriven` moves it forward only: a round a worker
  // moved it to meanwhile is left as it is (tasks/part-life.ts).
  await deps.enqueuePart(part, rowOfTasks(row), round);
  await new RowDelivery(row.ref, part).apply({ kind: 'redriven', round, runsAt: now }, now);
  return true;
}

/** The rows after the cursor and at least SWEEP_AFTER_MS old: those without `delivery` get the trigger's work. */
async function sweep(now: number, limit: number, deps: ReconcileDeps): Promise<number> {
  const { FieldPath } = await firestoreSdk();
  const cursorRef = deps.db.collection(SWEEP_CURSOR.collection).doc(SWEEP_CURSOR.id);
  const cursor = (await cursorRef.get()).data() as { created_at?: unknown; id?: unknown } | undefined;
  let query = deps.db
    .collection(SIGNUPS)
    .where('created_at', '<=', new Date(now - SWEEP_AFTER_MS))
    .orderBy('created_at')
    .orderBy(FieldPath.documentId());
  if (cursor && typeof cursor.id === 'string' && millisOf(cursor.created_at) > 0) {
    query = query.startAfter(cursor.created_at, cursor.id);
  }
  const page = await query.limit(limit).get();
  let swept = 0;
  for (const row of page.docs) {
    if (row.get(DELIVERY) !== undefined) continue;
    if ((await deps.index(row.ref)) === 'delivery_enqueued') swept += 1;
  }
  const last = page.docs[page.docs.length - 1];
  if (last) await cursorRef.set({ created_at: last.get('created_at'), id: last.id });
  return swept;
}

/** The reconciler's deps in a deployed function. */
export function reconcileDepsFromParams(db: Firestore): ReconcileDeps {
  const enqueue = enqueuePart(cloudTasksEnqueue, MAILBOX_KEY_SECRET.value());
  const indexDeps: IndexSignupDeps = {
    mailboxSecret: MAILBOX_KEY_SECRET.value(),
    enqueuePart: enqueue,
    clock: systemClock,
    logger: cloudLogger,
  };
  return {
    db,
    clock: systemClock,
    logger: cloudLogger,
    enqueuePart: enqueue,
    index: (ref) => indexSignup(ref, indexDeps),
    mailPerHour: intParam(MAIL_PER_HOUR, DEFAULTS.MAIL_PER_HOUR),
  };
}

/**
 * Every 10 minutes: a part's tasks give up after days, so a re-drive is never more than ten minutes late,
 * and a run finds nothing to do (two empty range reads and the cursor's read) on a quiet day.
 */
export const RECONCILE_SCHEDULE = 'every 10 minutes';
/** RECONCILE_SCHEDULE in ms: with CONFIRM_WAIT_MS, how late at most a part whose enqueue failed is re-driven. */
export const RECONCILE_EVERY_MS = 10 * 60_000;

export const reconcileDeliveriesJob = onSchedule(
  {
    schedule: RECONCILE_SCHEDULE,
    timeZone: 'Etc/UTC',
    secrets: [MAILBOX_KEY_SECRET],
    timeoutSeconds: 300,
    maxInstances: 1,
    retryCount: 0,
  },
  async () => {
    await reconcileDeliveries(reconcileDepsFromParams(await adminFirestore()));
  },
);
