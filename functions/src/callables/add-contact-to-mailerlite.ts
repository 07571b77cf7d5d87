import '../global-options';
import { HttpsError, onCall } from 'firebase-functions/v2/https';
import { withAppCheck } from '../app-check';
import { type Clock, systemClock } from '../clock';
import { CALLABLES } from '../contract';
import { cloudLogger, emailFields, type Logger } from '../logs';
import { MAILBOX_KEY_SECRET } from '../params';
import { mailboxKey } from '../privacy/mailbox-key';
import { parseAddContactInput, validated } from '../schemas';
import { afterBucket, cloudTasksEnqueue, deliveryTaskId, type Enqueue, QUEUES } from '../tasks/queue';
import { ACCEPTED, type Accepted } from './accepted';

export interface AddContactDeps {
  enqueue: Enqueue;
  /** MAILBOX_KEY_SECRET: the mailbox's key, and so the task's id (queue.ts, deliveryTaskId). */
  mailboxSecret: string;
  clock: Clock;
  logger: Logger;
}

/**
 * Checks the body and hands the contact to the deliver-contact queue (tasks/deliver-contact.ts), which
 * upserts it into MailerLite if, and only if, a sign-up of that pairing is stored. The stored row enqueues
 * the same work itself (signups/index-signup.ts) under the same task id (tasks/queue.ts, deliveryTaskId),
 * so this call costs no second dispatch; it hurries the work only when the row's trigger is late. It reads
 * nothing and
 * answers the same for every well-formed call, stored or not, erased, already a contact, or a stranger's
 * guess: neither the reply nor its timing says which. Bad input is `invalid-argument` and enqueues nothing.
 */
export async function handleAddContactToMailerlite(data: unknown, deps: AddContactDeps): Promise<Accepted> {
  const input = validated(CALLABLES.addContact, deps.logger, parseAddContactInput, data);
  const now = deps.clock.now();
  try {
    await deps.enqueue(
      QUEUES.contact,
      {
        email: input.emailAsSent,
        subscription_type: input.subscriptionType,
        source: input.source,
      },
      {
        id: deliveryTaskId(deps.mailboxSecret, QUEUES.contact, {
          mailboxKey: mailboxKey(deps.mailboxSecret, input.email),
          list: input.subscriptionType,
          at: now,
        }),
        notBefore: afterBucket(now),
      },
    );
  } catch {
    deps.logger.error('add_contact.enqueue_failed', emailFields(input.email));
    throw new HttpsError(
      'unavailable',
      'The contact could not be queued. The sign-up is stored, and its own task delivers it.',
    );
  }
  return ACCEPTED;
}

export const addContactToMailerlite = onCall(
  { secrets: [MAILBOX_KEY_SECRET], timeoutSeconds: 30 },
  withAppCheck(CALLABLES.addContact, (request) =>
    handleAddContactToMailerlite(request.data, {
      enqueue: cloudTasksEnqueue,
      mailboxSecret: MAILBOX_KEY_SECRET.value(),
      clock: systemClock,
      logger: cloudLogger,
    }),
  ),
);
