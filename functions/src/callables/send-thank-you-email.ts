import '../global-options';
import { HttpsError, onCall } from 'firebase-functions/v2/https';
import { withAppCheck } from '../app-check';
import { type Clock, systemClock } from '../clock';
import { CALLABLES } from '../contract';
import { cloudLogger, emailFields, type Logger } from '../logs';
import { MAILBOX_KEY_SECRET } from '../params';
import { mailboxKey } from '../privacy/mailbox-key';
import { parseThankYouInput, validated } from '../schemas';
import { afterBucket, cloudTasksEnqueue, deliveryTaskId, type Enqueue, QUEUES } from '../tasks/queue';
import { ACCEPTED, type Accepted } from './accepted';

export interface SendThankYouDeps {
  enqueue: Enqueue;
  /** MAILBOX_KEY_SECRET: the mailbox's key, and so the task's id (queue.ts, deliveryTaskId). */
  mailboxSecret: string;
  clock: Clock;
  logger: Logger;
}

/**
 * Checks the body and hands the thank-you to the deliver-thank-you queue (tasks/deliver-thank-you.ts),
 * which sends it once per mailbox, ever, and only for a stored sign-up; the stored row enqueues the same
 * work itself under the same task id (see add-contact-to-mailerlite.ts), so this only hurries it when the
 * row's trigger is late. Reads nothing, answers the same
 * for every well-formed call (see add-contact-to-mailerlite.ts); bad input is `invalid-argument`.
 */
export async function handleSendThankYouEmail(data: unknown, deps: SendThankYouDeps): Promise<Accepted> {
  const input = validated(CALLABLES.sendThankYou, deps.logger, parseThankYouInput, data);
  const now = deps.clock.now();
  try {
    await deps.enqueue(
      QUEUES.thankYou,
      { email: input.emailAsSent },
      {
        id: deliveryTaskId(deps.mailboxSecret, QUEUES.thankYou, {
          mailboxKey: mailboxKey(deps.mailboxSecret, input.email),
          list: '',
          at: now,
        }),
        notBefore: afterBucket(now),
      },
    );
  } catch {
    deps.logger.error('thank_you.enqueue_failed', emailFields(input.email));
    throw new HttpsError('unavailable', 'The thank-you could not be queued. The sign-up is stored.');
  }
  return ACCEPTED;
}

export const sendThankYouEmail = onCall(
  { secrets: [MAILBOX_KEY_SECRET], timeoutSeconds: 30 },
  withAppCheck(CALLABLES.sendThankYou, (request) =>
    handleSendThankYouEmail(request.data, {
      enqueue: cloudTasksEnqueue,
      mailboxSecret: MAILBOX_KEY_SECRET.value(),
      clock: systemClock,
      logger: cloudLogger,
    }),
  ),
);
