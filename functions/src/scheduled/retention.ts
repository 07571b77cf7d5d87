import '../global-options';
import type { Firestore, Query, QueryDocumentSnapshot } from 'firebase-admin/firestore';
import { onSchedule } from 'firebase-functions/v2/scheduler';
import { type Clock, systemClock } from '../clock';
import { SIGNUPS } from '../contract';
import { adminFirestore } from '../firestore';
import { cloudLogger, type Logger } from '../logs';
import { MAIL_BUDGETS } from '../mail/budget';
import { RETENTION_DAYS } from '../params';
import { MAILERLITE_CONTACTS } from '../privacy/mailerlite-contacts';
import { mailboxSignups } from '../signups/lookup';

const DAY_MS = 24 * 60 * 60_000;

export interface RetentionDeps {
  db: Firestore;
  clock: Clock;
  logger: Logger;
  retentionDays: number;
  /** Documents read per page (400). */
  pageSize?: number;
}

/**
 * Erases sign-ups past the retention period, page by page, contact records (privacy/mailerlite-contacts.ts:
 * they name an address) not pushed or claimed as long with no row of their mailbox left, and the mail
 * budget's counters of hours more than a day past. Thank-you records and the suppression list hold no address
 * and are kept: they stop a second thank-you, or mail after an unsubscribe, however long after.
 */
export async function handleRetention(deps: RetentionDeps) {
  if (!Number.isInteger(deps.retentionDays) || deps.retentionDays < 1) {
    throw new RangeError(
      `RETENTION_DAYS must be a whole number of days, at least 1 (is ${deps.retentionDays}).`,
    );
  }
  const now = deps.clock.now();
  const cutoff = new Date(now - deps.retentionDays * DAY_MS);
  const pageSize = deps.pageSize ?? 400;
  const report = {
    signups: await deleteAll(deps.db.collection(SIGNUPS).where('created_at', '<', cutoff), pageSize),
    contacts: await deleteAll(
      deps.db.collection(MAILERLITE_CONTACTS).where('seen_at', '<', cutoff),
      pageSize,
      // Still used by a kept row: deleting it would make a later spelling a second subscriber.
      async (record) => {
        const [row] = await mailboxSignups(deps.db, record.id, 1);
        if (!row) return true;
        await record.ref.update({ seen_at: new Date(now) });
        return false;
      },
    ),
    mailBudgets: await deleteAll(
      deps.db.collection(MAIL_BUDGETS).where('hour_start', '<', new Date(now - DAY_MS)),
      pageSize,
    ),
  };
  deps.logger.info('retention.erased', {
    retention_days: deps.retentionDays,
    cutoff: cutoff.toISOString(),
    signups: report.signups,
    contacts: report.contacts,
    mail_budgets: report.mailBudgets,
  });
  return report;
}

/** Deletes what the query finds (what `unused` agrees to, when given), page by page after the last document read. */
async function deleteAll(
  query: Query,
  pageSize: number,
  unused?: (doc: QueryDocumentSnapshot) => Promise<boolean>,
): Promise<number> {
  let deleted = 0;
  let last: QueryDocumentSnapshot | undefined;
  for (;;) {
    const page = await (last ? query.startAfter(last) : query).limit(pageSize).get();
    const gone = [];
    for (const doc of page.docs) if (!unused || (await unused(doc))) gone.push(doc);
    if (gone.length > 0) {
      const batch = query.firestore.batch();
      for (const doc of gone) batch.delete(doc.ref);
      await batch.commit();
      deleted += gone.length;
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
