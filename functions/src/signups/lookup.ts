import type { Firestore, Query, QueryDocumentSnapshot } from 'firebase-admin/firestore';
import type { SubscriptionType } from '../contract';
import { normaliseEmail, SIGNUPS } from '../contract';

/**
 * How the functions find sign-ups: by an exact key, never by a scan, and never more than a bounded number
 * at a time, so what a bot stored costs it, not every later call.
 *
 * - `mailbox_key`, written on each new sign-up by index-signup.ts (the page's payload stays the spec's three
 *   fields; the rules let no client write it): every row of one mailbox, whatever its spelling.
 * - `email` as typed and normalised: the rows a call names, including one whose key the trigger has not
 *   written yet (it runs a moment after the insert).
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

/**
 * Up to `limit` stored sign-ups of the address as typed or normalised, in all: each form one query, the
 * second only for what the first left of the limit.
 */
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
