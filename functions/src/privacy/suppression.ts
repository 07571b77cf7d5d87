import { randomUUID } from 'node:crypto';
import type { DocumentReference, DocumentSnapshot, Firestore } from 'firebase-admin/firestore';
import type { Clock } from '../clock';
import { normaliseEmail, SUPPRESSIONS } from '../contract';
import { firestoreSdk } from '../firestore';
import type { MailerLiteClient, RequestOptions } from '../mailerlite/client';
import { MailerLiteError } from '../mailerlite/errors';
import { mailboxKey } from './mailbox-key';
import type { ContactRecords } from './mailerlite-contacts';
import { openUnsubscribeToken, type UnsubscribeToken, unsubscribeToken } from './unsubscribe-token';

/**
 * The suppression list: `suppressed_mailboxes/{mailbox key}`, one entry per mailbox that unsubscribed,
 * kept for good and holding no address. No later sign-up of that mailbox, by anyone and in any spelling,
 * is mailed or put back into MailerLite (its row is still stored, as the page's insert requires, and the
 * page shows the same success); a person who wants back in writes to the contact address, and an operator
 * removes the entry (functions/README.md, "One mailbox").
 *
 * While an erasure is not finished the entry also holds the write-ahead mark (erasure.ts): `pending`,
 * `pending_id` (the attempt that set it) and `sealed`, the address sealed with UNSUBSCRIBE_SECRET as in the
 * unsubscribe link (never in clear), so privacy/pending-erasures.ts can finish it after any crash or outage.
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

/** Whether an entry still holds an erasure that has not finished. */
export function isPending(entry: DocumentSnapshot): boolean {
  return entry.get(PENDING) === true;
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

/**
 * Hands a marked entry to its own finish task (privacy/finish-erasure.ts, finishErasureLater), named by the
 * entry's id and the mark: Cloud Tasks retries it until MailerLite has forgotten the mailbox.
 */
export type FinishErasureLater = (pending: { entry: string; mark: string }) => Promise<unknown>;

/**
 * What came of handing a mark to its finish task: enqueued; not (Cloud Tasks failed: the half-hourly job,
 * privacy/pending-erasures.ts, finishes the entry); or no queue to hand it to (a list built without one).
 */
export type HandOff = 'enqueued' | 'enqueue_failed' | 'no_queue';

export type ForgetOutcome =
  | { kind: 'forgotten' | 'absent' }
  | { kind: 'pending'; error: MailerLiteError; finishTask: HandOff };

/**
 * The suppression list with its keys: MAILBOX_KEY_SECRET names the entries (mailbox-key.ts),
 * UNSUBSCRIBE_SECRET seals the addresses an unfinished erasure holds (unsubscribe-token.ts). Built once
 * per invocation with the contact records (privacy/mailboxes.ts) and handed to what checks or erases, so
 * no layer below carries a secret.
 *
 * It is also the guard around every push into MailerLite (the contact worker's upsert):
 * before the push, `among` says which mailboxes unsubscribed (not pushed); after it, `forgetIfSuppressed`
 * looks again and forgets those that unsubscribed while the push was in flight. The erasure writes the
 * entry before it forgets the subscriber, so either its forget follows the push or the look after the push
 * sees the entry.
 */
export class SuppressionList {
  constructor(
    private readonly db: Firestore,
    /** MAILBOX_KEY_SECRET and UNSUBSCRIBE_SECRET (mailboxes.ts, MailboxSecrets). */
    private readonly secrets: { mailbox: string; unsubscribe: string },
    private readonly contacts: ContactRecords,
    /** Where a mark goes to be finished; absent, only the half-hourly job finishes it. */
    private readonly finishErasureLater?: FinishErasureLater,
  ) {}

  /**
   * Hands the mark `mark` on `entry` (a suppression entry's id) to its finish task. Never throws: a mark
   * that could not be handed on is still finished by the half-hourly job; the caller logs the outcome.
   */
  async handOff(entry: string, mark: string): Promise<HandOff> {
    if (!this.finishErasureLater) return 'no_queue';
    try {
      await this.finishErasureLater({ entry, mark });
      return 'enqueued';
    } catch {
      return 'enqueue_failed';
    }
  }

  ref(email: string): DocumentReference {
    return this.db.collection(SUPPRESSIONS).doc(mailboxKey(this.secrets.mailbox, email));
  }

  /** The normalised addresses among these whose mailbox is on the suppression list: one batched read. */
  async among(emails: readonly string[]): Promise<Set<string>> {
    const distinct = [...new Set(emails.map(normaliseEmail))];
    if (distinct.length === 0) return new Set();
    const entries = await this.db.getAll(...distinct.map((email) => this.ref(email)));
    return new Set(distinct.filter((_, index) => entries[index]?.exists));
  }

  /**
   * The write-ahead mark: the entry (created if new, merged if not) says an erasure of this mailbox is
   * under way and holds the address sealed. An earlier mark's seal of another spelling moves to the
   * aliases, so no attempt (a second click, a push the contact worker could not undo) loses
   * another's address before MailerLite has forgotten it. Returns the attempt's id, which only this
   * attempt may clear.
   */
  async markPending(emailAsTyped: string, now: number): Promise<string> {
    const ref = this.ref(emailAsTyped);
    const id = randomUUID();
    const seal = unsubscribeToken(this.secrets.unsubscribe, emailAsTyped);
    await this.db.runTransaction(async (transaction) => {
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
  async sealAliases(ref: DocumentReference, aliases: readonly string[]): Promise<void> {
    const seals = aliases.map((alias) => unsubscribeToken(this.secrets.unsubscribe, alias));
    await ref.set({ [ALIASES]: aliasesOf(seals) }, { merge: true });
  }

  /** The addresses an entry's mark holds sealed: the link's first, then the aliases. Null if they do not open. */
  sealedAddresses(entry: { get(field: string): unknown }): string[] | null {
    const secret = this.secrets.unsubscribe;
    const sealed = entry.get(SEALED) as Partial<UnsubscribeToken> | undefined;
    const opened = openUnsubscribeToken(secret, sealed?.a, sealed?.t);
    if (!opened) return null;
    const addresses = [opened.emailAsTyped];
    const aliases = (entry.get(ALIASES) ?? {}) as Record<string, Partial<UnsubscribeToken>>;
    for (const token of Object.values(aliases)) {
      const alias = openUnsubscribeToken(secret, token?.a, token?.t);
      if (alias) addresses.push(alias.email);
    }
    return addresses;
  }

  /**
   * After a push: the pushed mailboxes (each by its address, `email`, and the spelling pushed, `address`)
   * looked up again in one read, and each one now on the list forgotten (forgetNowOrLater), yielded with
   * what came of it, one at a time, so a caller's bookkeeping of the earlier ones stands if a later one
   * throws. Only a Firestore failure is thrown.
   */
  async *forgetIfSuppressed<T extends { email: string; address?: string }>(
    client: MailerLiteClient,
    pushed: readonly T[],
    options: { clock: Clock; request?: RequestOptions },
  ): AsyncGenerator<{ pushed: T; forget: ForgetOutcome }> {
    if (pushed.length === 0) return;
    const suppressed = await this.among(pushed.map((item) => item.email));
    for (const item of pushed) {
      if (!suppressed.has(normaliseEmail(item.email))) continue;
      const forget = await this.forgetNowOrLater(client, item.address ?? item.email, {
        now: options.clock.now(),
        request: options.request,
      });
      yield { pushed: item, forget };
    }
  }

  /**
   * Forgets the MailerLite contact of a suppressed mailbox now or, when MailerLite fails, later: the address
   * given and the spelling the mailbox's contact record names (privacy/mailerlite-contacts.ts), if another, then the
   * record itself; when MailerLite fails the entry gets the write-ahead mark back and is handed to its finish
   * task (handOff; the half-hourly job is the net), and the record stays for it to find. The contact worker
   * undoes a push that raced an unsubscribe through here, so a person who left is never left on the list by
   * an outage. Only a Firestore failure is thrown.
   */
  async forgetNowOrLater(
    client: MailerLiteClient,
    email: string,
    options: { now: number; request?: RequestOptions },
  ): Promise<ForgetOutcome> {
    const record = this.contacts.ref(email);
    const known = (await record.get()).get('email');
    const addresses = [...new Set([normaliseEmail(email), ...(typeof known === 'string' ? [known] : [])])];
    let kind: 'forgotten' | 'absent' = 'absent';
    try {
      for (const address of addresses) {
        if (await client.forgetSubscriber(address, options.request)) kind = 'forgotten';
      }
    } catch (error) {
      if (!(error instanceof MailerLiteError)) throw error;
      const mark = await this.markPending(email, options.now);
      return { kind: 'pending', error, finishTask: await this.handOff(this.ref(email).id, mark) };
    }
    await record.delete();
    return { kind };
  }
}
