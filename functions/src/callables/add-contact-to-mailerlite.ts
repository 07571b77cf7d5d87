import '../global-options';
import { HttpsError, onCall } from 'firebase-functions/v2/https';
import { withAppCheck } from '../app-check';
import { type Clock, systemClock } from '../clock';
import { CALLABLES } from '../contract';
import { cloudLogger, emailFields, type Logger } from '../logs';
import { MAILBOX_KEY_SECRET, UNSUBSCRIBE_SECRET } from '../params';
import { parseAddContactInput, validated } from '../schemas';
import { cloudTasksEnqueue, type Enqueue, QUEUES, taskId } from '../tasks/queue';
import { ACCEPTED, type Accepted } from './accepted';

export interface AddContactDeps {
  enqueue: Enqueue;
  /** UNSUBSCRIBE_SECRET: keys the task id (queue.ts, taskId). */
  secret: string;
  clock: Clock;
  logger: Logger;
}

/**
 * Checks the body and hands the contact to the deliver-contact queue (tasks/deliver-contact.ts), which
 * upserts it into MailerLite if, and only if, a sign-up of that pairing is stored. The stored row has
 * already enqueued the same work itself (signups/index-signup.ts): this call can only hurry it, and the
 * mailbox's contact record makes the two tasks one upsert. It reads nothing and
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
      taskId(deps.secret, QUEUES.contact, input.email, input.subscriptionType, now),
    );
  } catch {
    deps.logger.error('add_contact.enqueue_failed', emailFields(input.email));
    throw new HttpsError(
      'unavailable',
      'The contact could not be queued. The sign-up is stored; the sync delivers it.',
    );
  }
  return ACCEPTED;
}

export const addContactToMailerlite = onCall(
  { secrets: [UNSUBSCRIBE_SECRET, MAILBOX_KEY_SECRET], timeoutSeconds: 30 },
  withAppCheck(CALLABLES.addContact, (request) =>
    handleAddContactToMailerlite(request.data, {
      enqueue: cloudTasksEnqueue,
      secret: UNSUBSCRIBE_SECRET.value(),
      clock: systemClock,
      logger: cloudLogger,
    }),
  ),
);
