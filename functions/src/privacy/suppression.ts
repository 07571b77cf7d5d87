import { randomUUID } from 'node:crypto';
import type { DocumentReference, DocumentSnapshot, Firestore } from 'firebase-admin/firestore';
import { normaliseEmail, SUPPRESSIONS } from '../contract';
import { firestoreSdk } from '../firestore';
import type { MailerLiteClient, RequestOptions } from '../mailerlite/client';
import { contactRecordRef } from '../mailerlite/contacts';
import { MailerLiteError } from '../mailerlite/errors';
import { earlierMailboxKey, mailboxKey } from './mailbox-key';
import { type UnsubscribeToken, unsubscribeToken } from './unsubscribe-token';

/**
 * The suppression list: `suppressed_mailboxes/{mailbox key}`, one entry per mailbox that unsubscribed,
 * kept for good and holding no address. No later sign-up of that mailbox, by anyone and in any spelling,
 * is mailed or put back into MailerLite (its row is still stored, as the page's insert requires, and the
 * page shows the same success); a person who wants back in writes to the contact address, and an operator
 * removes the entry (functions/README.md, "One mailbox").
 *
 * While an erasure is not finished the entry also holds the write-ahead mark (erasure.ts): `pending`,
 * `pending_id` (the attempt that set it) and `sealed`, the address sealed with UNSUBSCRIBE_SECRET as in the
 * unsubscribe link (never in clear), so pending-erasures.ts can finish it after any crash or outage.
 */
export interface SuppressionEntry {
  /** The latest unsubscribe click of this mailbox. */
  erased_at: Date;
  pending?: true;
  pending_id?: string;
  sealed?: UnsubscribeToken;
  aliases?: Record<string, UnsubscribeToken>;
}

export const PENDING = 'pending';
export const PENDING_ID = 'pending_id';
export const SEALED = 'sealed';
/**
 * The mailbox's other spellings, sealed the same way, each under its seal's `t` (a keyed MAC of the
 * normalised address, unsubscribe-token.ts): one name per address, and none that shows it.
 */
export const ALIASES = 'aliases';

/** The aliases field of these seals, to merge into an entry. */
function aliasesOf(seals: readonly UnsubscribeToken[]): Record<string, UnsubscribeToken> {
  return Object.fromEntries(seals.map((seal) => [seal.t, seal]));
}

export interface SuppressionKeys {
  db: Firestore;
  /** MAILBOX_KEY_SECRET: names the entry (mailbox-key.ts). */
  mailboxSecret: string;
}

export function suppressionRef(keys: SuppressionKeys, email: string): DocumentReference {
  return keys.db.collection(SUPPRESSIONS).doc(mailboxKey(keys.mailboxSecret, email));
}

/** Whether an entry still holds an erasure that has not finished. */
export function isPending(entry: DocumentSnapshot): boolean {
  return entry.get(PENDING) === true;
}

/**
 * The normalised addresses among these whose mailbox is on the suppression list: one batched read. A
 * `+tag` spelling is also looked up under the key it had before tags were folded on every domain
 * (mailbox-key.ts, earlierMailboxKey), where an entry written then still sits.
 */
export async function suppressedAmong(
  keys: SuppressionKeys,
  emails: readonly string[],
): Promise<Set<string>> {
  const suppressed = new Set<string>();
  const distinct = [...new Set(emails.map(normaliseEmail))];
  if (distinct.length === 0) return suppressed;
  const lookups = distinct.flatMap((email) => {
    const earlier = earlierMailboxKey(keys.mailboxSecret, email);
    const refs = [suppressionRef(keys, email)];
    if (earlier) refs.push(keys.db.collection(SUPPRESSIONS).doc(earlier));
    return refs.map((ref) => ({ email, ref }));
  });
  const entries = await keys.db.getAll(...lookups.map((lookup) => lookup.ref));
  entries.forEach((entry, index) => {
    const email = lookups[index]?.email;
    if (email !== undefined && entry.exists) suppressed.add(email);
  });
  return suppressed;
}

/**
 * The write-ahead mark: the entry (created if new, merged if not) says an erasure of this mailbox is under
 * way and holds the address sealed. An earlier mark's seal of another spelling moves to the aliases, so no
 * attempt (a second click, a push the sync or the contact worker could not undo) loses another's address
 * before MailerLite has forgotten it. Returns the attempt's id, which only this attempt may clear.
 */
export async function markPending(
  keys: SuppressionKeys & { unsubscribeSecret: string },
  emailAsTyped: string,
  now: number,
): Promise<string> {
  const ref = suppressionRef(keys, emailAsTyped);
  const id = randomUUID();
  const seal = unsubscribeToken(keys.unsubscribeSecret, emailAsTyped);
  await keys.db.runTransaction(async (transaction) => {
    const entry = await transaction.get(ref);
    const earlier = entry.get(SEALED) as UnsubscribeToken | undefined;
    const keep = isPending(entry) && earlier && earlier.t !== seal.t ? [earlier] : [];
    transaction.set(
      ref,
      {
        erased_at: new Date(now),
        [PENDING]: true,
        [PENDING_ID]: id,
        [SEALED]: seal,
        ...(keep.length > 0 ? { [ALIASES]: aliasesOf(keep) } : {}),
      },
      { merge: true },
    );
  });
  return id;
}

/** Adds addresses to a marked entry's aliases, sealed, before their rows are deleted (erasure.ts). */
export async function sealAliases(
  ref: DocumentReference,
  aliases: readonly string[],
  unsubscribeSecret: string,
): Promise<void> {
  const seals = aliases.map((alias) => unsubscribeToken(unsubscribeSecret, alias));
  await ref.set({ [ALIASES]: aliasesOf(seals) }, { merge: true });
}

/**
 * Clears the mark once the erasure it stands for is done, unless another attempt has set it since (a second
 * click, or a push that MailerLite would not undo): that attempt finishes and clears it.
 */
export async function clearPending(ref: DocumentReference, attempt: string): Promise<boolean> {
  const { FieldValue } = await firestoreSdk();
  return ref.firestore.runTransaction(async (transaction) => {
    const entry = await transaction.get(ref);
    if (!entry.exists || entry.get(PENDING_ID) !== attempt) return false;
    transaction.update(ref, {
      [PENDING]: FieldValue.delete(),
      [PENDING_ID]: FieldValue.delete(),
      [SEALED]: FieldValue.delete(),
      [ALIASES]: FieldValue.delete(),
    });
    return true;
  });
}

export type ForgetOutcome = { kind: 'forgotten' | 'absent' } | { kind: 'pending'; error: MailerLiteError };

/**
 * Forgets the MailerLite contact of a suppressed mailbox now or, when MailerLite fails, later: the address
 * given and the spelling the mailbox's contact record names (mailerlite/contacts.ts), if another, then the
 * record itself; when MailerLite fails the entry gets the write-ahead mark back, for pending-erasures.ts,
 * and the record stays for it to find. The sync and the contact worker undo a push that raced an
 * unsubscribe through here, so a person who left is never left on the list by an outage. Only a Firestore
 * failure is thrown.
 */
export async function forgetNowOrLater(
  deps: SuppressionKeys & { client: MailerLiteClient; unsubscribeSecret: string; now: number },
  email: string,
  request?: RequestOptions,
): Promise<ForgetOutcome> {
  const record = contactRecordRef(deps.db, deps.mailboxSecret, email);
  const known = (await record.get()).get('email');
  const addresses = [...new Set([normaliseEmail(email), ...(typeof known === 'string' ? [known] : [])])];
  let kind: 'forgotten' | 'absent' = 'absent';
  try {
    for (const address of addresses) {
      if (await deps.client.forgetSubscriber(address, request)) kind = 'forgotten';
    }
  } catch (error) {
    if (!(error instanceof MailerLiteError)) throw error;
    await markPending(deps, email, deps.now);
    return { kind: 'pending', error };
  }
  await record.delete();
  return { kind };
}
