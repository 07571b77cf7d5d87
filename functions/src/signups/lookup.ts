import type { Firestore, QueryDocumentSnapshot } from 'firebase-admin/firestore';
import { normaliseEmail, SIGNUPS, type SubscriptionType } from '../contract';

/**
 * Sign-ups found by an exact key, bounded, never a scan, so what a bot stored costs it, not later calls: by
 * `mailbox_key` (the trigger writes it), or by `email` for a row the trigger has not keyed yet.
 */
export const MAILBOX_KEY_FIELD = 'mailbox_key';

/** Rows read per query. */
export const ROWS_PER_QUERY = 400;

/** Up to `limit` sign-ups of the address as typed or normalised (sign-ups are stored as typed), in all. */
export async function storedSignups(
  db: Firestore,
  emailAsTyped: string,
  limit: number,
): Promise<QueryDocumentSnapshot[]> {
  const docs: QueryDocumentSnapshot[] = [];
  const typed = emailAsTyped.trim();
  for (const email of new Set([typed, normaliseEmail(typed)])) {
    if (docs.length >= limit) break;
    const query = db
      .collection(SIGNUPS)
      .where('email', '==', email)
      .limit(limit - docs.length);
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
  const query = db.collection(SIGNUPS).where(MAILBOX_KEY_FIELD, '==', key);
  // Equality on two fields: Firestore serves it by merging the single-field indexes, no composite one.
  return (await (list ? query.where('subscription_type', '==', list) : query).limit(limit).get()).docs;
}
