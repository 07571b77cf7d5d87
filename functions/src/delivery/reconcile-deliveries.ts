import '../global-options';
import {
  type DocumentReference,
  type DocumentSnapshot,
  FieldPath,
  type Firestore,
} from 'firebase-admin/firestore';
import { onSchedule } from 'firebase-functions/v2/scheduler';
import type { Clock } from '../clock';
import { SIGNUPS } from '../contract';
import { adminFirestore } from '../firestore';
import type { Logger } from '../logs';
import { MAILBOX_KEY_SECRET } from '../params';
import { indexDepsFromParams, indexSignup } from './index-signup';
import { DELIVERY, DELIVERY_PARTS, type EnqueuePart, partOf, redrive } from './part-life';

/** Rows re-driven per part and rows swept, at most, per run; a larger backlog is worked through run by run. */
export const RECONCILE_PER_RUN = 200;

/** The sweep looks at rows this old: the trigger runs within a second, and retries for a day. */
export const SWEEP_AFTER_MS = 10 * 60_000;

/** `_delivery/sweep`: how far the sweep has read the sign-ups, by (`created_at`, id). No address. */
export const SWEEP_CURSOR = { collection: '_delivery', id: 'sweep' } as const;

export interface ReconcileDeps {
  db: Firestore;
  clock: Clock;
  logger: Logger;
  enqueuePart: EnqueuePart;
  /** The trigger's work, for a row it never reached. */
  index: (ref: DocumentReference) => ReturnType<typeof indexSignup>;
  perRun?: number;
}

/**
 * The net under the rows' own tasks: each run re-drives (next round) every pending part whose `due_at` has
 * passed (its enqueue never confirmed, or its retries gave up), and does the trigger's work for rows it never
 * reached. At most RECONCILE_PER_RUN rows each; every step stands alone, so one failure (a missing index, an
 * enqueue refused) is logged, counted and retried next run without stopping the others.
 */
export async function reconcileDeliveries(deps: ReconcileDeps) {
  const now = deps.clock.now();
  const limit = deps.perRun ?? RECONCILE_PER_RUN;
  /** Parts re-driven, rows the trigger never reached indexed now, steps that failed (each logged). */
  const report = { redriven: 0, swept: 0, failed: 0 };
  const step: Step = async (name, work) => {
    try {
      return { done: await work() };
    } catch (error) {
      report.failed += 1;
      // The error's code or name, never its message (which may hold a query's values).
      const { code, name: kind } = (error ?? {}) as Record<string, unknown>;
      deps.logger.error('reconcile.step_failed', { step: name, error: String(code ?? kind ?? 'Error') });
      return null;
    }
  };
  for (const part of DELIVERY_PARTS) {
    const field = `${DELIVERY}.${part}.due_at`;
    const due = await step(`due ${part}`, () =>
      deps.db.collection(SIGNUPS).where(field, '<=', new Date(now)).orderBy(field).limit(limit).get(),
    );
    for (const row of due?.done.docs ?? []) {
      const record = partOf(row.data(), part);
      // A settled part has no due time: only pending ones are found.
      if (record?.state !== 'pending') continue;
      const round = record.round + 1;
      const redriven = await step(`redrive ${part}`, () => redrive(deps.enqueuePart, part, row, round, now));
      if (redriven) report.redriven += 1;
    }
  }
  report.swept = await sweep(now, limit, deps, step);
  if (report.redriven + report.swept + report.failed > 0) {
    deps.logger.info('reconcile.run', { ...report });
  }
  return report;
}

/** One step of a run, isolated: what `work` answered, or null when it threw (logged and counted). */
type Step = <T>(name: string, work: () => Promise<T>) => Promise<{ done: T } | null>;

/** The rows after the cursor and at least SWEEP_AFTER_MS old: those without `delivery` get the trigger's work. */
async function sweep(now: number, limit: number, deps: ReconcileDeps, step: Step): Promise<number> {
  const cursorRef = deps.db.collection(SWEEP_CURSOR.collection).doc(SWEEP_CURSOR.id);
  const read = await step('sweep cursor', () => cursorRef.get());
  if (!read) return 0;
  // Written only here, from a row the query read: its `created_at` and id.
  const cursor = read.done.data() as { created_at: unknown; id: string } | undefined;
  let query = deps.db
    .collection(SIGNUPS)
    .where('created_at', '<=', new Date(now - SWEEP_AFTER_MS))
    .orderBy('created_at')
    .orderBy(FieldPath.documentId());
  if (cursor) query = query.startAfter(cursor.created_at, cursor.id);
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

/** Every 10 minutes: a re-drive is at most ten minutes late, and a quiet run costs three reads. */
export const RECONCILE_EVERY_MS = 10 * 60_000;
export const RECONCILE_SCHEDULE = `every ${RECONCILE_EVERY_MS / 60_000} minutes`;

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
    const deps = indexDepsFromParams();
    const db = await adminFirestore();
    await reconcileDeliveries({ ...deps, db, index: (ref) => indexSignup(ref, deps) });
  },
);
