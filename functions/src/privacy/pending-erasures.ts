import '../global-options';
import { onSchedule } from 'firebase-functions/v2/scheduler';
import { SUPPRESSIONS } from '../contract';
import { MAILBOX_KEY_SECRET, MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET } from '../params';
import { type EraseDeps, finishPendingEntry } from './erasure';
import { erasureDepsFromParams } from './erasure-from-params';
import { PENDING } from './suppression';

/** Entries read per run; a backlog bigger than this is worked through over the next runs. */
export const PENDING_ERASURES_PER_RUN = 200;

export interface PendingErasuresReport {
  /** Rows deleted and MailerLite's forgets done: the mark cleared. */
  finished: number;
  /** MailerLite failed, or the run's deadline came: tried on the next run. */
  stillPending: number;
  /** Sealed with another secret (UNSUBSCRIBE_SECRET was rotated): kept, and reported for an operator. */
  unopenable: number;
}

/**
 * The net under the finish tasks (an erasure that died before its enqueue, a task that gave up): finishes
 * each entry still marked; at MailerLite's first failure (likely down) the rest wait for the next run.
 */
export async function finishPendingErasures(deps: EraseDeps): Promise<PendingErasuresReport> {
  const report: PendingErasuresReport = { finished: 0, stillPending: 0, unopenable: 0 };
  const pending = await deps.db
    .collection(SUPPRESSIONS)
    .where(PENDING, '==', true)
    .limit(PENDING_ERASURES_PER_RUN)
    .get();
  if (pending.empty) return report;
  let mailerLiteFailed = false;
  for (const entry of pending.docs) {
    // After MailerLite's first failure the rest wait, but an entry whose seals do not open is still reported.
    const waiting = mailerLiteFailed && deps.mailboxes.suppression.sealedAddresses(entry) !== null;
    const outcome = waiting ? 'pending' : await finishPendingEntry(entry, deps);
    if (outcome === 'unopenable') report.unopenable += 1;
    else if (outcome === 'pending') {
      mailerLiteFailed = true;
      report.stillPending += 1;
    } else report.finished += 1;
  }
  deps.logger[report.unopenable > 0 ? 'error' : 'info']('pending_erasures.run', {
    finished: report.finished,
    still_pending: report.stillPending,
    unopenable: report.unopenable,
  });
  return report;
}

export const finishErasures = onSchedule(
  {
    schedule: 'every 30 minutes',
    timeZone: 'Etc/UTC',
    secrets: [MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET, MAILBOX_KEY_SECRET],
    timeoutSeconds: 300,
    maxInstances: 1,
    retryCount: 0,
  },
  async () => {
    await finishPendingErasures(await erasureDepsFromParams(240_000));
  },
);
