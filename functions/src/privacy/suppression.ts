import { randomUUID } from 'node:crypto';
import { type DocumentReference, FieldValue, type Firestore } from 'firebase-admin/firestore';
import type { Clock } from '../clock';
import { normaliseEmail, SUPPRESSIONS } from '../contract';
import type { MailerLiteClient, RequestOptions } from '../mailerlite/client';
import { MailerLiteError } from '../mailerlite/errors';
import { mailboxKey } from './mailbox-key';
import type { ContactRecords } from './mailerlite-contacts';
import { openUnsubscribeToken, type UnsubscribeToken, unsubscribeToken } from './unsubscribe-token';

/**
 * `suppressed_mailboxes/{mailbox key}`: one entry per mailbox that unsubscribed, kept for good, no address in
 * clear: `erased_at`, the latest click. No later sign-up of it, by anyone in any spelling, is mailed or pushed
 * (the page shows the same success). Until its erasure finishes (erasure.ts) it holds the write-ahead mark
 * (`pending`, and `pending_id`, the attempt that set it), the address sealed (`sealed`) and the mailbox's
 * other spellings sealed (`aliases`, each under its seal's MAC: one name per address, none in clear).
 */

/** The aliases field of these seals, to merge into an entry. */
function aliasesOf(seals: readonly UnsubscribeToken[]): Record<string, UnsubscribeToken> {
  return Object.fromEntries(seals.map((seal) => [seal.t, seal]));
}

/** Clears the mark, unless another attempt has set it since: that one clears it. */
export async function clearPending(ref: DocumentReference, attempt: string): Promise<void> {
  await ref.firestore.runTransaction(async (transaction) => {
    const entry = await transaction.get(ref);
    if (entry.get('pending_id') !== attempt) return;
    const gone = FieldValue.delete();
    transaction.update(ref, { pending: gone, pending_id: gone, sealed: gone, aliases: gone });
  });
}

/** Hands a marked entry to its finish task, retried until MailerLite has forgotten the mailbox. */
export type FinishErasureLater = (pending: { entry: string; mark: string }) => Promise<unknown>;

/** Not enqueued (`enqueue_failed`, `no_queue`): the half-hourly job (finish-erasure.ts) finishes the entry. */
type HandOff = 'enqueued' | 'enqueue_failed' | 'no_queue';

type ForgetOutcome =
  | { kind: 'forgotten' | 'absent' }
  | { kind: 'pending'; error: MailerLiteError; finishTask: HandOff };

/**
 * The suppression list with its keys, built once per invocation so no layer below carries a secret. The guard
 * around every push: `among` before it, `forgetIfSuppressed` after; the erasure writes its entry before it
 * forgets, so either its forget follows the push or the look after the push sees the entry.
 */
export class SuppressionList {
  constructor(
    private readonly db: Firestore,
    /** MAILBOX_KEY_SECRET and UNSUBSCRIBE_SECRET (mailboxes.ts). */
    private readonly secrets: { mailbox: string; unsubscribe: string },
    private readonly contacts: ContactRecords,
    /** Where a mark goes to be finished; absent, only the half-hourly job finishes it. */
    private readonly finishErasureLater?: FinishErasureLater,
  ) {}

  /** Hands a mark to its finish task. Never throws: the half-hourly job finishes what is not handed on. */
  async handOff(entry: string, mark: string): Promise<HandOff> {
    if (!this.finishErasureLater) return 'no_queue';
    return this.finishErasureLater({ entry, mark }).then(
      () => 'enqueued',
      () => 'enqueue_failed',
    );
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
   * The write-ahead mark, with the address sealed; an earlier mark's seal moves to the aliases, so no attempt
   * loses another's address. Returns the attempt's id, which only this attempt may clear.
   */
  async markPending(emailAsTyped: string, now: number): Promise<string> {
    const ref = this.ref(emailAsTyped);
    const id = randomUUID();
    const seal = unsubscribeToken(this.secrets.unsubscribe, emailAsTyped);
    await this.db.runTransaction(async (transaction) => {
      const entry = await transaction.get(ref);
      const earlier = entry.get('sealed') as UnsubscribeToken | undefined;
      const mark = { erased_at: new Date(now), pending: true, pending_id: id, sealed: seal };
      const keep = entry.get('pending') === true && earlier && earlier.t !== seal.t;
      transaction.set(ref, keep ? { ...mark, aliases: aliasesOf([earlier]) } : mark, { merge: true });
    });
    return id;
  }

  /** Adds addresses to a marked entry's aliases, sealed, before their rows are deleted (erasure.ts). */
  async sealAliases(ref: DocumentReference, aliases: readonly string[]): Promise<void> {
    const seals = aliases.map((alias) => unsubscribeToken(this.secrets.unsubscribe, alias));
    await ref.set({ aliases: aliasesOf(seals) }, { merge: true });
  }

  /** The addresses an entry's mark holds sealed: the link's first, then the aliases. Null if they do not open. */
  sealedAddresses(entry: { get(field: string): unknown }): string[] | null {
    const secret = this.secrets.unsubscribe;
    const sealed = entry.get('sealed') as Partial<UnsubscribeToken> | undefined;
    const opened = openUnsubscribeToken(secret, sealed?.a, sealed?.t);
    if (!opened) return null;
    const aliases = Object.values((entry.get('aliases') ?? {}) as Record<string, Partial<UnsubscribeToken>>);
    const others = aliases.map((token) => openUnsubscribeToken(secret, token?.a, token?.t)?.email);
    return [opened.emailAsTyped, ...others.filter((email) => email !== undefined)];
  }

  /** After a push: each pushed mailbox now on the list forgotten, yielded one at a time. */
  async *forgetIfSuppressed<T extends { email: string; address?: string }>(
    client: MailerLiteClient,
    pushed: readonly T[],
    options: { clock: Clock; request?: RequestOptions },
  ): AsyncGenerator<{ pushed: T; forget: ForgetOutcome }> {
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
   * Forgets a suppressed mailbox's contact (the address and the spelling its record names), then the record;
   * when MailerLite fails, the mark goes back on and the finish task takes over. Throws only Firestore's.
   */
  async forgetNowOrLater(
    client: MailerLiteClient,
    email: string,
    options: { now: number; request?: RequestOptions },
  ): Promise<ForgetOutcome> {
    try {
      const { kind, record } = await this.forget(client, [email], options.request);
      await record.ref.delete();
      return { kind };
    } catch (error) {
      if (!(error instanceof MailerLiteError)) throw error;
      const mark = await this.markPending(email, options.now);
      return { kind: 'pending', error, finishTask: await this.handOff(this.ref(email).id, mark) };
    }
  }

  /**
   * MailerLite forgets these addresses (one mailbox's, the first its own) and the spelling its contact record
   * names, which may be no row's any more. Returns the record as read, for the caller to delete; throws
   * MailerLite's errors.
   */
  async forget(client: MailerLiteClient, addresses: readonly string[], request?: RequestOptions) {
    const record = await this.contacts.ref(addresses[0] ?? '').get();
    const known = record.get('email');
    const all = new Set([...addresses.map(normaliseEmail), ...(typeof known === 'string' ? [known] : [])]);
    let kind: 'forgotten' | 'absent' = 'absent';
    for (const address of all) {
      if (await client.forgetSubscriber(address, request)) kind = 'forgotten';
    }
    return { kind, record };
  }
}
