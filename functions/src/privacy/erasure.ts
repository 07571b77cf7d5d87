import type { DocumentSnapshot, Firestore, QueryDocumentSnapshot, Timestamp } from 'firebase-admin/firestore';
import type { Clock } from '../clock';
import { ERASURES, SIGNUPS, THANK_YOU_MAILS } from '../contract';
import { emailFields, type Logger, sha256Hex } from '../logs';
import type { MailerLiteClient, RequestOptions } from '../mailerlite/client';
import { MailerLiteError } from '../mailerlite/errors';
import { normaliseEmail } from '../schemas';
import { unsubscribeToken } from './unsubscribe-token';

/**
 * An erasure's tombstone, `erasures/{sha256 of the normalised address}`: `{ erased_at }`, no address.
 * Written before anything is erased, so a sync or an add-contact call that read the sign-up earlier
 * and pushes it to MailerLite after the erasure sees it and forgets the subscriber again (see
 * erasedSince). Kept this long, far longer than such a call can run, then swept by the retention job.
 *
 * When MailerLite could not forget the subscriber, the tombstone also holds `forget_pending: true` and
 * `forget_token`, the address sealed as in the unsubscribe link (never in clear), until
 * pending-forgets.ts has forgotten it; the retention job keeps such a tombstone until then.
 */
export const ERASURE_TOMBSTONE_MS = 2 * 24 * 60 * 60_000;

/** The tombstone's fields while a forget waits (pending-forgets.ts reads and clears them). */
export const FORGET_PENDING = 'forget_pending';
export const FORGET_TOKEN = 'forget_token';

/** Whether a tombstone still holds a MailerLite forget that has not gone through. */
export function isForgetPending(tombstone: DocumentSnapshot): boolean {
  return tombstone.get(FORGET_PENDING) === true;
}

export type ForgetOutcome = { kind: 'forgotten' | 'absent' } | { kind: 'pending'; error: MailerLiteError };

/**
 * Forgets the MailerLite subscriber of an erased address (its tombstone exists), now or, when MailerLite
 * fails, later: the tombstone is marked and given the address sealed with UNSUBSCRIBE_SECRET, as in the
 * unsubscribe link (never in clear), for pending-forgets.ts. The erasure, the sync and add-contact all
 * forget through here, so a person who left is never left on the list by an outage. Only a Firestore
 * failure is thrown.
 */
export async function forgetNowOrLater(
  deps: { db: Firestore; client: MailerLiteClient; secret: string },
  email: string,
  request?: RequestOptions,
): Promise<ForgetOutcome> {
  try {
    return { kind: (await deps.client.forgetSubscriber(email, request)) ? 'forgotten' : 'absent' };
  } catch (error) {
    if (!(error instanceof MailerLiteError)) throw error;
    await deps.db
      .collection(ERASURES)
      .doc(sha256Hex(normaliseEmail(email)))
      .update({ [FORGET_PENDING]: true, [FORGET_TOKEN]: unsubscribeToken(deps.secret, email) });
    return { kind: 'pending', error };
  }
}

/** The forms an address is queried by: sign-ups are stored as typed, MailerLite keeps it normalised. */
export function addressForms(emailAsTyped: string): string[] {
  const typed = emailAsTyped.trim();
  const normalised = normaliseEmail(typed);
  return typed === normalised ? [normalised] : [typed, normalised];
}

/**
 * Every stored sign-up of the address, in any case: Firestore compares strings exactly, and the page
 * stores the address as typed, so `Kid@x.com` and `KID@x.com` are two rows of one person. The rules
 * let only an address starting with a letter, digit or one of a few symbols in, so its rows all lie
 * in the ranges of its first character in lower and upper case: those (a small part of the
 * collection) are read and compared normalised.
 */
export async function everySignupOf(db: Firestore, email: string): Promise<QueryDocumentSnapshot[]> {
  const normalised = normaliseEmail(email);
  const first = normalised[0] ?? '';
  const found: QueryDocumentSnapshot[] = [];
  for (const start of new Set([first, first.toUpperCase()])) {
    const end = String.fromCharCode(start.charCodeAt(0) + 1);
    let last: QueryDocumentSnapshot | undefined;
    for (;;) {
      let query = db
        .collection(SIGNUPS)
        .where('email', '>=', start)
        .where('email', '<', end)
        .orderBy('email')
        .limit(500);
      if (last) query = query.startAfter(last);
      const page = await query.get();
      for (const doc of page.docs) {
        const stored = doc.get('email');
        if (typeof stored === 'string' && normaliseEmail(stored) === normalised) found.push(doc);
      }
      if (page.size < 500) break;
      last = page.docs[page.docs.length - 1];
    }
  }
  return found;
}

/** The stored sign-ups of the address as typed or normalised: the two forms a caller can name. */
export async function storedSignups(db: Firestore, emailAsTyped: string): Promise<QueryDocumentSnapshot[]> {
  const docs: QueryDocumentSnapshot[] = [];
  for (const email of addressForms(emailAsTyped)) {
    docs.push(...(await db.collection(SIGNUPS).where('email', '==', email).get()).docs);
  }
  return docs;
}

export function millisOf(value: unknown): number {
  if (value instanceof Date) return value.getTime();
  if (value && typeof (value as Timestamp).toMillis === 'function') return (value as Timestamp).toMillis();
  return 0;
}

/**
 * For each normalised address whose erasure happened at or after the given time, that erasure's time.
 * `signedUpAt` is the latest sign-up the caller acted on: an erasure before it is older than that
 * sign-up (the person signed up again, which is a new consent) and does not count.
 */
export async function erasedSince(
  db: Firestore,
  contacts: ReadonlyArray<{ email: string; signedUpAt: number }>,
): Promise<Set<string>> {
  const erased = new Set<string>();
  if (contacts.length === 0) return erased;
  const refs = contacts.map((contact) => db.collection(ERASURES).doc(sha256Hex(contact.email)));
  const snapshots = await db.getAll(...refs);
  snapshots.forEach((snapshot, index) => {
    const contact = contacts[index];
    if (!contact || !snapshot.exists) return;
    if (millisOf(snapshot.get('erased_at')) >= contact.signedUpAt) erased.add(contact.email);
  });
  return erased;
}

export interface EraseDeps {
  db: Firestore;
  client: MailerLiteClient;
  clock: Clock;
  logger: Logger;
  request?: RequestOptions;
  /** UNSUBSCRIBE_SECRET: seals the address in the tombstone when MailerLite's forget must be retried. */
  secret: string;
}

export interface ErasureReport {
  signups: number;
  /** Forgotten now, not a subscriber, or left for pending-forgets.ts because MailerLite failed. */
  mailerLite: 'forgotten' | 'absent' | 'pending';
  thankYouRecord: boolean;
}

/**
 * Erases everything the product keeps about an address: the tombstone first (so a sync running now
 * undoes its own push), then every sign-up in either form, the thank-you record, and the MailerLite
 * subscriber (forgotten, not just unsubscribed). Sign-ups go in every spelling of the address. Idempotent: a second run finds nothing and succeeds.
 * Firestore goes before MailerLite, so if MailerLite fails nothing is left for a sync to push back, and
 * the forget is recorded on the tombstone for pending-forgets.ts to retry: the person's click is
 * enough, whatever MailerLite was doing. Only a Firestore failure is thrown.
 */
export async function eraseAddress(emailAsTyped: string, deps: EraseDeps): Promise<ErasureReport> {
  const email = normaliseEmail(emailAsTyped);
  const id = sha256Hex(email);
  const now = deps.clock.now();
  await deps.db
    .collection(ERASURES)
    .doc(id)
    .set({ erased_at: new Date(now) });

  let signups = 0;
  for (;;) {
    const docs = await everySignupOf(deps.db, emailAsTyped);
    if (docs.length === 0) break;
    const batch = deps.db.batch();
    for (const doc of docs.slice(0, 400)) batch.delete(doc.ref);
    await batch.commit();
    signups += Math.min(docs.length, 400);
  }
  const thankYou = deps.db.collection(THANK_YOU_MAILS).doc(id);
  const thankYouRecord = (await thankYou.get()).exists;
  if (thankYouRecord) await thankYou.delete();

  const forget = await forgetNowOrLater(deps, email, deps.request);
  const mailerLite = forget.kind;
  if (forget.kind === 'pending') {
    deps.logger.warn('unsubscribe.forget_pending', { ...emailFields(email), error: forget.error.name });
  }
  deps.logger.info('unsubscribe.erased', {
    ...emailFields(email),
    signups,
    mailerlite: mailerLite,
    thank_you_record: thankYouRecord,
  });
  return { signups, mailerLite, thankYouRecord };
}
