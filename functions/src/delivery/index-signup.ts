import '../global-options';
import type { DocumentReference } from 'firebase-admin/firestore';
import { onDocumentCreated } from 'firebase-functions/v2/firestore';
import { type Clock, systemClock } from '../clock';
import { SIGNUPS } from '../contract';
import { cloudLogger, type Logger } from '../logs';
import { MAILBOX_KEY_SECRET } from '../params';
import { emailFields } from '../privacy/log-fields';
import { mailboxKey } from '../privacy/mailbox-key';
import { parseAddContactInput } from '../schemas';
import { MAILBOX_KEY_FIELD } from '../signups/lookup';
import { cloudTasksEnqueue } from './queue';
import {
  applyToParts,
  DELIVERY,
  DELIVERY_PARTS,
  type DeliveryPart,
  type EnqueuePart,
  enqueuePart,
  firstPart,
  type PartRecord,
  partOf,
  rowOfTasks,
} from './row-delivery';

export type IndexOutcome = 'delivery_enqueued' | 'not_an_address' | 'gone';

export interface IndexSignupDeps {
  mailboxSecret: string;
  enqueuePart: EnqueuePart;
  clock: Clock;
  logger: Logger;
}

/**
 * The one producer of a sign-up's delivery: the stored row, whatever became of the page that stored it (a
 * phone that lost its link after the insert, a tab closed before the two callables, which make no work
 * themselves). Each new row
 *
 * 1. gets its mailbox key (signups/lookup.ts) and its delivery state, both parts pending on round 0
 *    (delivery/part-life.ts, firstPart) and due within CONFIRM_WAIT_MS, in one transaction: a retried trigger,
 *    or the reconciler's sweep of a row the trigger never reached, finds them there and keeps them;
 * 2. enqueues the round its pending parts are on, to run at once: the contact (delivery/deliver-contact.ts) and
 *    the thank-you (delivery/deliver-thank-you.ts), each task naming the row and its round under an id only the
 *    server can make (delivery/queue.ts, deliveryTaskId), so a retry enqueues nothing twice;
 * 3. once Cloud Tasks has a part's task, moves its due time on to when that task's retries would have ended
 *    (the part's `enqueued`).
 *
 * A row the grammar refuses (the rules let none in) gets neither; a row erased before this runs is left
 * erased, and enqueues nothing. Enqueueing fails only with Cloud Tasks itself: then the trigger throws and
 * is retried (`retry: true`); a part whose enqueue never answered keeps its short due time, and the reconciler
 * (every 10 minutes) re-drives it under its next round within 15 minutes of the commit; a row the trigger
 * never reached, the reconciler's sweep finds (delivery/reconcile-deliveries.ts).
 */
export async function indexSignup(ref: DocumentReference, deps: IndexSignupDeps): Promise<IndexOutcome> {
  const now = deps.clock.now();
  const indexed = await ref.firestore.runTransaction(async (transaction) => {
    const row = await transaction.get(ref);
    if (!row.exists) return 'gone' as const;
    const data = row.data() ?? {};
    let email: string;
    try {
      ({ email } = parseAddContactInput({
        email: data.email,
        subscription_type: data.subscription_type,
        source: data.source,
      }));
    } catch {
      return 'not_an_address' as const;
    }
    const parts = new Map<DeliveryPart, PartRecord>();
    for (const part of DELIVERY_PARTS) parts.set(part, partOf(data, part) ?? firstPart(now));
    if (DELIVERY_PARTS.some((part) => partOf(data, part) === null)) {
      transaction.update(ref, {
        [MAILBOX_KEY_FIELD]: mailboxKey(deps.mailboxSecret, email),
        [DELIVERY]: Object.fromEntries(parts),
      });
    }
    return { email, parts, row: rowOfTasks(row) };
  });
  if (indexed === 'gone') return 'gone';
  if (indexed === 'not_an_address') {
    deps.logger.warn('signup.not_indexed', { reason: 'not_an_address' });
    return 'not_an_address';
  }
  const pending = [...indexed.parts].filter(([, record]) => record.state === 'pending');
  // A part found on a later round (the reconciler or the mail budget moved it) has that round's task
  // enqueued already: the same id is a duplicate, and costs nothing. A duplicate is always that round's own
  // task (the id names the row and the round), so it confirms the round as an enqueue does.
  await Promise.all(pending.map(([part, record]) => deps.enqueuePart(part, indexed.row, record.round)));
  if (pending.length > 0) {
    await applyToParts(
      ref,
      pending.map(
        ([part, record]) => [part, { kind: 'enqueued', round: record.round, runsAt: now }] as const,
      ),
      deps.clock.now(),
    );
  }
  deps.logger.info('signup.enqueued', { ...emailFields(indexed.email), parts: pending.length });
  return 'delivery_enqueued';
}

export const indexSignupOnCreate = onDocumentCreated(
  // Retried on failure (the database or Cloud Tasks briefly unavailable): every step is idempotent.
  { document: `${SIGNUPS}/{signupId}`, secrets: [MAILBOX_KEY_SECRET], retry: true },
  async (event) => {
    if (!event.data) return;
    await indexSignup(event.data.ref, {
      mailboxSecret: MAILBOX_KEY_SECRET.value(),
      enqueuePart: enqueuePart(cloudTasksEnqueue, MAILBOX_KEY_SECRET.value()),
      clock: systemClock,
      logger: cloudLogger,
    });
  },
);
