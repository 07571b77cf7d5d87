import '../global-options';
import type { DocumentReference } from 'firebase-admin/firestore';
import { onDocumentCreated } from 'firebase-functions/v2/firestore';
import { type Clock, systemClock } from '../clock';
import { SIGNUPS } from '../contract';
import { cloudLogger, type Logger } from '../logs';
import { MAILBOX_KEY_SECRET } from '../params';
import { emailFields } from '../privacy/log-fields';
import { mailboxKey } from '../privacy/mailbox-key';
import { MAILBOX_KEY_FIELD } from '../signups/lookup';
import {
  applyToParts,
  DELIVERY,
  DELIVERY_PARTS,
  type EnqueuePart,
  enqueuePart,
  firstPart,
  partOf,
  rowOfTasks,
  storedAddress,
} from './part-life';
import { cloudTasksEnqueue } from './queue';

export type IndexOutcome = 'delivery_enqueued' | 'not_an_address' | 'gone';

export interface IndexSignupDeps {
  mailboxSecret: string;
  enqueuePart: EnqueuePart;
  clock: Clock;
  logger: Logger;
}

/**
 * The one producer of a sign-up's delivery is the stored row, whatever became of the page. Each new row gets
 * its mailbox key and both parts (firstPart) in one transaction, then the tasks of the rounds they are on,
 * confirmed by `enqueued`. Every step is idempotent; a failed enqueue leaves the short due time as the net.
 */
export async function indexSignup(ref: DocumentReference, deps: IndexSignupDeps): Promise<IndexOutcome> {
  const now = deps.clock.now();
  const indexed = await ref.firestore.runTransaction(async (transaction) => {
    const row = await transaction.get(ref);
    if (!row.exists) return 'gone' as const;
    let email: string;
    try {
      ({ email } = storedAddress(row));
    } catch {
      return 'not_an_address' as const;
    }
    const stored = DELIVERY_PARTS.map((part) => [part, partOf(row.data(), part)] as const);
    const parts = stored.map(([part, record]) => [part, record ?? firstPart(now)] as const);
    if (stored.some(([, record]) => record === null)) {
      transaction.update(ref, {
        [MAILBOX_KEY_FIELD]: mailboxKey(deps.mailboxSecret, email),
        [DELIVERY]: Object.fromEntries(parts),
      });
    }
    return { email, parts, row: rowOfTasks(row) };
  });
  if (indexed === 'not_an_address') deps.logger.warn('signup.not_indexed', { reason: indexed });
  if (typeof indexed === 'string') return indexed;
  const pending = indexed.parts.filter(([, record]) => record.state === 'pending');
  // A duplicate is that round's own task (the id names row and round): it confirms the round too.
  await Promise.all(pending.map(([part, record]) => deps.enqueuePart(part, indexed.row, record.round)));
  const enqueued = pending.map(
    ([part, { round }]) => [part, { kind: 'enqueued', round, runsAt: now }] as const,
  );
  await applyToParts(ref, enqueued, deps.clock.now());
  deps.logger.info('signup.enqueued', { ...emailFields(indexed.email), parts: pending.length });
  return 'delivery_enqueued';
}

export const indexSignupOnCreate = onDocumentCreated(
  // Retried on failure (the database or Cloud Tasks briefly unavailable): every step is idempotent.
  { document: `${SIGNUPS}/{signupId}`, secrets: [MAILBOX_KEY_SECRET], retry: true },
  async (event) => {
    if (event.data) await indexSignup(event.data.ref, indexDepsFromParams());
  },
);

/** The trigger's deps in a deployed function (the reconciler's sweep does the same work). */
export function indexDepsFromParams(): IndexSignupDeps {
  const mailboxSecret = MAILBOX_KEY_SECRET.value();
  const enqueue = enqueuePart(cloudTasksEnqueue, mailboxSecret);
  return { mailboxSecret, enqueuePart: enqueue, clock: systemClock, logger: cloudLogger };
}
