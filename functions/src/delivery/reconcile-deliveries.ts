import '../global-options';
import type { DocumentReference, DocumentSnapshot, Firestore } from 'firebase-admin/firestore';
import { onSchedule } from 'firebase-functions/v2/scheduler';
import { type Clock, systemClock } from '../clock';
import { SIGNUPS } from '../contract';
import { adminFirestore, firestoreSdk, millisOf } from '../firestore';
import { cloudLogger, type Logger } from '../logs';
import { MAILBOX_KEY_SECRET } from '../params';
import { type IndexSignupDeps, indexSignup } from './index-signup';
import { cloudTasksEnqueue } from './queue';
import {
  DELIVERY,
  DELIVERY_PARTS,
  type DeliveryPart,
  type EnqueuePart,
  enqueuePart,
  partOf,
  RowDelivery,
  rowOfTasks,
} from './row-delivery';

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
  /** The trigger's work, for a row it never reached (delivery/index-signup.ts). */
  index: (ref: DocumentReference) => ReturnType<typeof indexSignup>;
  perRun?: number;
}

export interface ReconcileReport {
  /** Parts whose tasks gave up (or were never confirmed) enqueued again, under their next round. */
  redriven: number;
  /** Rows the trigger never reached, indexed and enqueued now. */
  swept: number;
  /** Steps that failed (a query, one row's re-drive or index, the cursor), each logged; the others went on. */
  failed: number;
}

/**
 * Nothing is dropped while the row lives: the net under the rows' own tasks (the row is the outbox,
 * delivery/row-delivery.ts). Each run
 *
 * 1. re-drives every part still pending whose `due_at` has passed: its task was never confirmed (the
 *    enqueue after the trigger's commit failed: the part's short due time, delivery/part-life.ts) or its tasks
 *    gave up (Cloud Tasks' retry window ran out while MailerLite or the relay was down). The part's next round
 *    is enqueued (a task id Cloud Tasks has not seen) and its due time moved on, in a transaction that moves
 *    the round only forward (the part's `redriven`);
 * 2. sweeps the rows the create trigger never reached (no `delivery` yet: its retries ended, or the local
 *    stack was not running functions when the row was written), after a cursor, and does the trigger's work
 *    for them.
 *
 * A thank-you waiting for the mail budget is a pending part like any other: its next round is enqueued to run
 * in its slot's hour, and its due time is that round's (delivery/part-life.ts, `waits`).
 *
 * Bounded per run (RECONCILE_PER_RUN rows a part, as many swept), logged as counts only, and only when there
 * was something to do. Its one query per part is a range on `delivery.<part>.due_at`, the field
 * firestore.indexes.json keeps indexed (the rest of `delivery` is exempt from indexing). Each step stands
 * alone: a query that fails (an index missing), one row whose re-drive or index fails (an enqueue refused, a
 * write) or the sweep's cursor is logged (`reconcile.step_failed`, with the step and the error's code, never
 * an address) and counted, and the run goes on with the others; the next run tries it again.
 */
export async function reconcileDeliveries(deps: ReconcileDeps): Promise<ReconcileReport> {
  const now = deps.clock.now();
  const limit = deps.perRun ?? RECONCILE_PER_RUN;
  const report: ReconcileReport = { redriven: 0, swept: 0, failed: 0 };
  /** One step, isolated: its failure is logged and counted, and the run goes on. */
  const step: Step = async (name, work) => {
    try {
      return { done: await work() };
    } catch (error) {
      report.failed += 1;
      deps.logger.error('reconcile.step_failed', { step: name, error: errorCode(error) });
      return null;
    }
  };
  for (const part of DELIVERY_PARTS) {
    const field = `${DELIVERY}.${part}.due_at`;
    const due = await step(`due ${part}`, () =>
      deps.db.collection(SIGNUPS).where(field, '<=', new Date(now)).orderBy(field).limit(limit).get(),
    );
    for (const row of due?.done.docs ?? []) {
      if ((await step(`redrive ${part}`, () => redrive(row, part, now, deps)))?.done) report.redriven += 1;
    }
  }
  report.swept = await sweep(now, limit, deps, step);
  if (report.redriven + report.swept + report.failed > 0) {
    deps.logger.info('reconcile.run', { ...report });
  }
  return report;
}

/** A step of a run: what `work` answered, or null when it threw (logged and counted). */
type Step = <T>(name: string, work: () => Promise<T>) => Promise<{ done: T } | null>;

/** What a failed step logs: the error's code or name, never its message (which may hold a query's values). */
function errorCode(error: unknown): string {
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  return typeof code === 'string' || typeof code === 'number' ? String(code) : String(name ?? 'Error');
}

async function redrive(row: DocumentSnapshot, part: DeliveryPart, now: number, deps: ReconcileDeps) {
  const record = partOf(row.data(), part);
  // A settled part has no due time (delivery/part-life.ts): only a pending one is found.
  if (record?.state !== 'pending') return false;
  const round = record.round + 1;
  // Enqueued first: should the write below fail, the next run enqueues that round again (the same id, a
  // duplicate, which is that round's own task: the id names the row and the round); the other order could
  // move the due time on with no task behind it. The part's `redriven` moves it forward only: a round a worker
  // moved it to meanwhile is left as it is (delivery/part-life.ts).
  await deps.enqueuePart(part, rowOfTasks(row), round);
  await new RowDelivery(row.ref, part).apply({ kind: 'redriven', round, runsAt: now }, now);
  return true;
}

/** The rows after the cursor and at least SWEEP_AFTER_MS old: those without `delivery` get the trigger's work. */
async function sweep(now: number, limit: number, deps: ReconcileDeps, step: Step): Promise<number> {
  const { FieldPath } = await firestoreSdk();
  const cursorRef = deps.db.collection(SWEEP_CURSOR.collection).doc(SWEEP_CURSOR.id);
  const read = await step('sweep cursor', () => cursorRef.get());
  if (!read) return 0;
  const cursor = read.done.data() as { created_at?: unknown; id?: unknown } | undefined;
  let query = deps.db
    .collection(SIGNUPS)
    .where('created_at', '<=', new Date(now - SWEEP_AFTER_MS))
    .orderBy('created_at')
    .orderBy(FieldPath.documentId());
  if (cursor && typeof cursor.id === 'string' && millisOf(cursor.created_at) > 0) {
    query = query.startAfter(cursor.created_at, cursor.id);
  }
  const page = await step('sweep', () => query.limit(limit).get());
  let swept = 0;
  let last: DocumentSnapshot | undefined;
  for (const row of page?.done.docs ?? []) {
    if (row.get(DELIVERY) === undefined) {
      const indexed = await step('index', () => deps.index(row.ref));
      // The cursor stops before a row whose index failed: the next run tries it again.
      if (!indexed) break;
      if (indexed.done === 'delivery_enqueued') swept += 1;
    }
    last = row;
  }
  const at = last;
  if (at) await step('sweep cursor', () => cursorRef.set({ created_at: at.get('created_at'), id: at.id }));
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
