import '../global-options';
import { HttpsError, onCall } from 'firebase-functions/v2/https';
import { withAppCheck } from '../app-check';
import { type Clock, systemClock } from '../clock';
import { type AcceptedReply, CALLABLES, type CallableName } from '../contract';
import { cloudLogger, type LogEvent, type Logger } from '../logs';
import { MAILBOX_KEY_SECRET } from '../params';
import { emailFields } from '../privacy/log-fields';
import { mailboxKey } from '../privacy/mailbox-key';
import { parseAddContactInput, parseThankYouInput, validated } from '../schemas';
import {
  afterBucket,
  type ContactTask,
  cloudTasksEnqueue,
  deliveryTaskId,
  type Enqueue,
  QUEUES,
  type QueueName,
  type ThankYouTask,
} from '../tasks/queue';

/**
 * The two callables the page makes after its insert, add-contact-to-mailerlite and send-thank-you-email,
 * in one shape: check the body, enqueue one task for the worker that does the work (tasks/deliver-contact.ts,
 * tasks/deliver-thank-you.ts), answer `accepted`. The worker delivers only a stored sign-up, and the stored
 * row enqueues the same work itself (triggers/index-signup.ts) under the same task id (tasks/queue.ts,
 * deliveryTaskId), so a call costs no second dispatch; it hurries the work only when the row's trigger is
 * late. A call reads nothing and answers the same for every well-formed body, stored or not, erased, already
 * a contact or thanked, or a stranger's guess: neither the reply nor its timing says which; whatever comes
 * of it is known to the workers and their logs, and the page only logs the reply. Bad input is
 * `invalid-argument` and enqueues nothing; a queue that cannot be reached is `unavailable`.
 */
export interface SignupCallableDeps {
  enqueue: Enqueue;
  /** MAILBOX_KEY_SECRET: the mailbox's key, and so the task's id (queue.ts, deliveryTaskId). */
  mailboxSecret: string;
  clock: Clock;
  logger: Logger;
}

/** The one reply to every well-formed call (contract/src/index.ts, AcceptedReply). */
const ACCEPTED: AcceptedReply = Object.freeze({ status: 'accepted' });

/** What sets one sign-up callable apart from the other. */
interface SignupCallable<Input extends { email: string }> {
  name: CallableName;
  parse: (data: unknown) => Input;
  queue: QueueName;
  /** The task's body, and the list its id names ('' for the thank-you, one per mailbox whatever the list). */
  task: (input: Input) => { payload: ContactTask | ThankYouTask; list: string };
  /** Logged, with the address masked, when the task cannot be enqueued. */
  enqueueFailed: LogEvent;
  unavailable: string;
}

function signupCallable<Input extends { email: string }>(callable: SignupCallable<Input>) {
  const handle = async (data: unknown, deps: SignupCallableDeps): Promise<AcceptedReply> => {
    const input = validated(callable.name, deps.logger, callable.parse, data);
    const now = deps.clock.now();
    const { payload, list } = callable.task(input);
    const id = deliveryTaskId(deps.mailboxSecret, callable.queue, {
      mailboxKey: mailboxKey(deps.mailboxSecret, input.email),
      list,
      at: now,
    });
    try {
      await deps.enqueue(callable.queue, payload, { id, notBefore: afterBucket(now) });
    } catch {
      deps.logger.error(callable.enqueueFailed, emailFields(input.email));
      throw new HttpsError('unavailable', callable.unavailable);
    }
    return ACCEPTED;
  };
  const deployed = onCall(
    { secrets: [MAILBOX_KEY_SECRET], timeoutSeconds: 30 },
    withAppCheck(callable.name, (request) =>
      handle(request.data, {
        enqueue: cloudTasksEnqueue,
        mailboxSecret: MAILBOX_KEY_SECRET.value(),
        clock: systemClock,
        logger: cloudLogger,
      }),
    ),
  );
  return { handle, deployed };
}

/** The contact of the pairing sent, for deliver-contact to upsert into its list's group. */
const addContact = signupCallable({
  name: CALLABLES.addContact,
  parse: parseAddContactInput,
  queue: QUEUES.contact,
  task: (input) => ({
    payload: { email: input.emailAsSent, subscription_type: input.subscriptionType, source: input.source },
    list: input.subscriptionType,
  }),
  enqueueFailed: 'add_contact.enqueue_failed',
  unavailable: 'The contact could not be queued. The sign-up is stored, and its own task delivers it.',
});

/** The thank-you, for deliver-thank-you to send once per mailbox, ever. */
const sendThankYou = signupCallable({
  name: CALLABLES.sendThankYou,
  parse: parseThankYouInput,
  queue: QUEUES.thankYou,
  task: (input) => ({ payload: { email: input.emailAsSent }, list: '' }),
  enqueueFailed: 'thank_you.enqueue_failed',
  unavailable: 'The thank-you could not be queued. The sign-up is stored.',
});

export const handleAddContactToMailerlite = addContact.handle;
export const addContactToMailerlite = addContact.deployed;
export const handleSendThankYouEmail = sendThankYou.handle;
export const sendThankYouEmail = sendThankYou.deployed;
