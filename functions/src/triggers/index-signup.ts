import '../global-options';
import type { DocumentReference } from 'firebase-admin/firestore';
import { onDocumentCreated } from 'firebase-functions/v2/firestore';
import { SIGNUPS } from '../contract';
import { millisOf } from '../firestore';
import { cloudLogger, type Logger } from '../logs';
import { MAILBOX_KEY_SECRET } from '../params';
import { emailFields } from '../privacy/log-fields';
import { mailboxKey } from '../privacy/mailbox-key';
import { parseAddContactInput } from '../schemas';
import { MAILBOX_KEY_FIELD } from '../signups/lookup';
import { cloudTasksEnqueue, deliveryTaskId, type Enqueue, QUEUES, type QueueName } from '../tasks/queue';

export type IndexOutcome = 'delivery_enqueued' | 'not_an_address' | 'gone';

/**
 * What makes a stored sign-up the guarantee of its delivery, whatever became of the page that stored it
 * (a phone that lost its link after the insert, a tab closed before the two callables): each new row
 *
 * 1. gets its mailbox key written on it (lookup.ts), so the erasure, the sync and the workers find every
 *    row of a mailbox with one equality query;
 * 2. enqueues its contact (tasks/deliver-contact.ts) and its thank-you (tasks/deliver-thank-you.ts), to run
 *    at once, under the ids the page's callables give the same work (tasks/queue.ts, deliveryTaskId): one
 *    dispatch whichever enqueues first, and a retried trigger enqueues nothing twice.
 *
 * A row the grammar refuses (the rules let none in) gets neither; a row erased before this runs is left
 * erased, and enqueues nothing. Enqueueing fails only with Cloud Tasks itself: then the trigger throws
 * and is retried (`retry: true`), the key's write being idempotent.
 */
export async function indexSignup(
  row: { ref: DocumentReference; data: Record<string, unknown> },
  deps: { mailboxSecret: string; enqueue: Enqueue; logger: Logger },
): Promise<IndexOutcome> {
  const { email, subscription_type, source } = row.data;
  let input: ReturnType<typeof parseAddContactInput>;
  try {
    input = parseAddContactInput({ email, subscription_type, source });
  } catch {
    deps.logger.warn('signup.not_indexed', { reason: 'not_an_address' });
    return 'not_an_address';
  }
  const key = mailboxKey(deps.mailboxSecret, input.email);
  try {
    await row.ref.update({ [MAILBOX_KEY_FIELD]: key });
  } catch (error) {
    // 5 NOT_FOUND: the row was erased (one-click unsubscribe) before its key was written.
    if ((error as { code?: unknown }).code === 5) return 'gone';
    throw error;
  }
  // The bucket of the row's own time; a row written without one (none the rules let in) uses now.
  const at = millisOf(row.data.created_at) || Date.now();
  const id = (queue: QueueName, list: string) =>
    deliveryTaskId(deps.mailboxSecret, queue, { mailboxKey: key, list, at });
  await Promise.all([
    deps.enqueue(
      QUEUES.contact,
      { email: input.emailAsSent, subscription_type: input.subscriptionType, source: input.source },
      { id: id(QUEUES.contact, input.subscriptionType) },
    ),
    deps.enqueue(QUEUES.thankYou, { email: input.emailAsSent }, { id: id(QUEUES.thankYou, '') }),
  ]);
  deps.logger.info('signup.enqueued', emailFields(input.email));
  return 'delivery_enqueued';
}

export const indexSignupOnCreate = onDocumentCreated(
  // Retried on failure (the database or Cloud Tasks briefly unavailable): every step is idempotent.
  { document: `${SIGNUPS}/{signupId}`, secrets: [MAILBOX_KEY_SECRET], retry: true },
  async (event) => {
    if (!event.data) return;
    await indexSignup(
      { ref: event.data.ref, data: event.data.data() ?? {} },
      { mailboxSecret: MAILBOX_KEY_SECRET.value(), enqueue: cloudTasksEnqueue, logger: cloudLogger },
    );
  },
);
