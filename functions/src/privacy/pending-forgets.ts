import '../global-options';
import type { Firestore } from 'firebase-admin/firestore';
import { onSchedule } from 'firebase-functions/v2/scheduler';
import { ERASURES } from '../contract';
import { adminFirestore, firestoreSdk } from '../firestore';
import { cloudLogger, emailFields, type Logger } from '../logs';
import type { MailerLiteClient, RequestOptions } from '../mailerlite/client';
import { MailerLiteError } from '../mailerlite/errors';
import { mailerLiteFromParams } from '../mailerlite/from-params';
import { MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET } from '../params';
import { everySignupOf, FORGET_PENDING, FORGET_TOKEN, millisOf } from './erasure';
import { openUnsubscribeToken } from './unsubscribe-token';

/** Tombstones read per run; a backlog bigger than this is worked through over the next runs. */
export const PENDING_FORGETS_PER_RUN = 200;

export interface PendingForgetsDeps {
  db: Firestore;
  client: MailerLiteClient;
  /** UNSUBSCRIBE_SECRET: opens the sealed address the erasure left on the tombstone. */
  secret: string;
  logger: Logger;
  request?: RequestOptions;
}

export interface PendingForgetsReport {
  /** MailerLite forgot the subscriber (or had none left). */
  forgotten: number;
  /** The person signed up again after the erasure: a new consent, so the old forget is dropped. */
  superseded: number;
  /** MailerLite failed again: tried on the next run. */
  stillPending: number;
  /** Sealed with another secret (UNSUBSCRIBE_SECRET was rotated): kept, and reported for an operator. */
  unopenable: number;
}

/**
 * Finishes the erasures MailerLite failed (erasure.ts): for each tombstone marked `forget_pending`, opens
 * the sealed address and asks MailerLite to forget the subscriber, then clears the mark (the tombstone
 * itself goes with the retention job). A person who signed up again since the erasure is left alone:
 * that sign-up is a new consent. Stops at the first MailerLite failure (it is likely down); the rest
 * wait for the next run. Logged as counts only, and only when there was something to do.
 */
export async function forgetPending(deps: PendingForgetsDeps): Promise<PendingForgetsReport> {
  const report: PendingForgetsReport = { forgotten: 0, superseded: 0, stillPending: 0, unopenable: 0 };
  const pending = await deps.db
    .collection(ERASURES)
    .where(FORGET_PENDING, '==', true)
    .limit(PENDING_FORGETS_PER_RUN)
    .get();
  if (pending.empty) return report;
  const { FieldValue } = await firestoreSdk();
  let mailerLiteFailed = false;
  for (const doc of pending.docs) {
    const token = doc.get(FORGET_TOKEN) as { a?: unknown; t?: unknown } | undefined;
    const opened = openUnsubscribeToken(deps.secret, token?.a, token?.t);
    if (!opened) {
      report.unopenable += 1;
      continue;
    }
    if (mailerLiteFailed) {
      report.stillPending += 1;
      continue;
    }
    const erasedAt = millisOf(doc.get('erased_at'));
    const signups = await everySignupOf(deps.db, opened.email);
    if (signups.some((signup) => millisOf(signup.get('created_at')) > erasedAt)) {
      report.superseded += 1;
    } else {
      try {
        await deps.client.forgetSubscriber(opened.email, deps.request);
      } catch (error) {
        if (!(error instanceof MailerLiteError)) throw error;
        mailerLiteFailed = true;
        report.stillPending += 1;
        deps.logger.warn('forget_pending.failed', { ...emailFields(opened.email), error: error.name });
        continue;
      }
      report.forgotten += 1;
    }
    await doc.ref.update({ [FORGET_PENDING]: FieldValue.delete(), [FORGET_TOKEN]: FieldValue.delete() });
  }
  deps.logger[report.unopenable > 0 ? 'error' : 'info']('forget_pending.run', {
    forgotten: report.forgotten,
    superseded: report.superseded,
    still_pending: report.stillPending,
    unopenable: report.unopenable,
  });
  return report;
}

export const retryPendingForgets = onSchedule(
  {
    schedule: 'every 30 minutes',
    timeZone: 'Etc/UTC',
    secrets: [MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET],
    timeoutSeconds: 300,
    maxInstances: 1,
    retryCount: 0,
  },
  async () => {
    const { client } = mailerLiteFromParams({ timeoutMs: 10_000 });
    await forgetPending({
      db: await adminFirestore(),
      client,
      secret: UNSUBSCRIBE_SECRET.value(),
      logger: cloudLogger,
      request: { deadline: Date.now() + 240_000 },
    });
  },
);
