import '../global-options';
import type { Firestore, Query, QueryDocumentSnapshot } from 'firebase-admin/firestore';
import { onSchedule } from 'firebase-functions/v2/scheduler';
import { type Clock, systemClock } from '../clock';
import { ERASURES, SIGNUPS, THANK_YOU_MAILS } from '../contract';
import { adminFirestore } from '../firestore';
import { cloudLogger, type Logger } from '../logs';
import { RETENTION_DAYS } from '../params';
import { ERASURE_TOMBSTONE_MS, isForgetPending } from '../privacy/erasure';

const DAY_MS = 24 * 60 * 60_000;
export const RETENTION_PAGE_SIZE = 400;

export interface RetentionDeps {
  db: Firestore;
  clock: Clock;
  logger: Logger;
  retentionDays: number;
  pageSize?: number;
}

export interface RetentionReport {
  signups: number;
  thankYouRecords: number;
  tombstones: number;
}

/**
 * Erases what is older than the retention period: sign-ups by `created_at`, thank-you records by when
 * they were claimed, and erasure tombstones once no sync or call can still be holding the address
 * they guard (ERASURE_TOMBSTONE_MS). Page by page, each page one batched write, so a large backlog
 * never needs one huge read or write; logged as counts only.
 */
export async function handleRetention(deps: RetentionDeps): Promise<RetentionReport> {
  if (!Number.isInteger(deps.retentionDays) || deps.retentionDays < 1) {
    throw new RangeError(
      `RETENTION_DAYS must be a whole number of days, at least 1 (is ${deps.retentionDays}).`,
    );
  }
  const now = deps.clock.now();
  const cutoff = new Date(now - deps.retentionDays * DAY_MS);
  const pageSize = deps.pageSize ?? RETENTION_PAGE_SIZE;
  const report: RetentionReport = {
    signups: await deleteAll(deps.db, deps.db.collection(SIGNUPS).where('created_at', '<', cutoff), pageSize),
    thankYouRecords: await deleteAll(
      deps.db,
      deps.db.collection(THANK_YOU_MAILS).where('claimed_at', '<', cutoff),
      pageSize,
    ),
    // A tombstone still holding a forget MailerLite has not done yet stays until it is done.
    tombstones: await deleteAll(
      deps.db,
      deps.db.collection(ERASURES).where('erased_at', '<', new Date(now - ERASURE_TOMBSTONE_MS)),
      pageSize,
      isForgetPending,
    ),
  };
  deps.logger.info('retention.erased', {
    retention_days: deps.retentionDays,
    cutoff: cutoff.toISOString(),
    signups: report.signups,
    thank_you_records: report.thankYouRecords,
    tombstones: report.tombstones,
  });
  return report;
}

/** Deletes what the query finds but `keep`, page by page after the last document read. */
async function deleteAll(
  db: Firestore,
  query: Query,
  pageSize: number,
  keep: (doc: QueryDocumentSnapshot) => boolean = () => false,
): Promise<number> {
  let deleted = 0;
  let last: QueryDocumentSnapshot | undefined;
  for (;;) {
    const page = await (last ? query.startAfter(last) : query).limit(pageSize).get();
    const doomed = page.docs.filter((doc) => !keep(doc));
    if (doomed.length > 0) {
      const batch = db.batch();
      for (const doc of doomed) batch.delete(doc.ref);
      await batch.commit();
      deleted += doomed.length;
    }
    if (page.size < pageSize) return deleted;
    last = page.docs[page.docs.length - 1];
  }
}

export const eraseExpiredSignups = onSchedule(
  { schedule: 'every day 03:17', timeZone: 'Etc/UTC', timeoutSeconds: 540, maxInstances: 1, retryCount: 1 },
  async () => {
    try {
      await handleRetention({
        db: await adminFirestore(),
        clock: systemClock,
        logger: cloudLogger,
        retentionDays: RETENTION_DAYS.value(),
      });
    } catch (error) {
      cloudLogger.error('retention.failed', { error: error instanceof Error ? error.name : 'unknown' });
      throw error;
    }
  },
);
