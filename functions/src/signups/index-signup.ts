import '../global-options';
import type { DocumentReference } from 'firebase-admin/firestore';
import { onDocumentCreated } from 'firebase-functions/v2/firestore';
import { emailProblem, SIGNUPS } from '../contract';
import { cloudLogger, type Logger } from '../logs';
import { MAILBOX_KEY_SECRET } from '../params';
import { mailboxKey } from '../privacy/mailbox-key';
import { MAILBOX_KEY_FIELD } from './lookup';

/**
 * Writes the new sign-up's mailbox key on it (lookup.ts), so the erasure and the sync find every row of a
 * mailbox with one equality query. A row the grammar refuses (the rules let none in) gets no key; a row
 * erased before this runs is left erased.
 */
export async function indexSignup(
  row: { ref: DocumentReference; email: unknown },
  deps: { mailboxSecret: string; logger: Logger },
): Promise<'indexed' | 'not_an_address' | 'gone'> {
  if (emailProblem(row.email) !== null) {
    deps.logger.warn('signup.not_indexed', { reason: 'not_an_address' });
    return 'not_an_address';
  }
  try {
    await row.ref.update({ [MAILBOX_KEY_FIELD]: mailboxKey(deps.mailboxSecret, row.email as string) });
  } catch (error) {
    // 5 NOT_FOUND: the row was erased (one-click unsubscribe) before its key was written.
    if ((error as { code?: unknown }).code === 5) return 'gone';
    throw error;
  }
  return 'indexed';
}

export const indexSignupOnCreate = onDocumentCreated(
  // Retried on failure (the database briefly unavailable): the update is idempotent.
  { document: `${SIGNUPS}/{signupId}`, secrets: [MAILBOX_KEY_SECRET], retry: true },
  async (event) => {
    if (!event.data) return;
    await indexSignup(
      { ref: event.data.ref, email: event.data.get('email') },
      { mailboxSecret: MAILBOX_KEY_SECRET.value(), logger: cloudLogger },
    );
  },
);
