import type { Firestore, Query, QueryDocumentSnapshot } from 'firebase-admin/firestore';
import type { SubscriptionType } from '../contract';
import { normaliseEmail, SIGNUPS } from '../contract';

/**
 * Sign-ups found by an exact key, bounded, never a scan, so what a bot stored costs it, not later calls: by
 * `mailbox_key` (the trigger writes it), or by `email` for a row the trigger has not keyed yet.
 */
export const MAILBOX_KEY_FIELD = 'mailbox_key';

/** Rows read per query. */
export const ROWS_PER_QUERY = 400;

/** The forms an address is queried by: sign-ups are stored as typed, MailerLite keeps it normalised. */
export function addressForms(emailAsTyped: string): string[] {
  const typed = emailAsTyped.trim();
  const normalised = normaliseEmail(typed);
  return typed === normalised ? [normalised] : [typed, normalised];
}

/** Up to `limit` sign-ups of the address as typed or normalised, in all. */
export async function storedSignups(
  db: Firestore,
  emailAsTyped: string,
  limit: number,
  list?: SubscriptionType,
): Promise<QueryDocumentSnapshot[]> {
  const docs: QueryDocumentSnapshot[] = [];
  for (const email of addressForms(emailAsTyped)) {
    if (docs.length >= limit) break;
    const query = ofList(db.collection(SIGNUPS).where('email', '==', email), list).limit(limit - docs.length);
    docs.push(...(await query.get()).docs);
  }
  return docs;
}

/** Up to `limit` sign-ups of the mailbox (of one list, if given), found by its key. */
export async function mailboxSignups(
  db: Firestore,
  key: string,
  limit: number,
  list?: SubscriptionType,
): Promise<QueryDocumentSnapshot[]> {
  return (
    await ofList(db.collection(SIGNUPS).where(MAILBOX_KEY_FIELD, '==', key), list)
      .limit(limit)
      .get()
  ).docs;
}

// Equality on two fields: Firestore serves it by merging the single-field indexes, no composite one.
function ofList(query: Query, list: SubscriptionType | undefined): Query {
  return list ? query.where('subscription_type', '==', list) : query;
}
