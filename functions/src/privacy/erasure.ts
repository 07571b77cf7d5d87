import {
  type DocumentReference,
  type DocumentSnapshot,
  FieldValue,
  type Firestore,
} from 'firebase-admin/firestore';
import type { Clock } from '../clock';
import { normaliseEmail, THANK_YOU_MAILS } from '../contract';
import type { Logger } from '../logs';
import type { MailerLiteClient, RequestOptions } from '../mailerlite/client';
import { MailerLiteError } from '../mailerlite/errors';
import { mailboxSignups, ROWS_PER_QUERY, storedSignups } from '../signups/lookup';
import { emailFields } from './log-fields';
import type { Mailboxes } from './mailboxes';
import { pushInFlight } from './mailerlite-contacts';
import { clearPending, isPending, PENDING_ID } from './suppression';

/**
 * Erasing a mailbox (the one-click unsubscribe), written ahead so that a crash or an outage at any step
 * leaves the work to finish, never a person half-erased:
 *
 * 1. The suppression entry (suppression.ts) is created or merged with the pending mark and the address
 *    sealed. From here on nothing mails the mailbox or puts it back into MailerLite.
 * 2. Every sign-up of the mailbox is deleted, found by its key and by the link's own spellings, a bounded
 *    page at a time; the other spellings found on the way are sealed into the entry first (`aliases`), so
 *    their MailerLite subscribers are forgotten too.
 * 3. MailerLite forgets each of those addresses, and the spelling the mailbox's contact record names
 *    (privacy/mailerlite-contacts.ts); then the record goes.
 * 4. The mark is cleared, only by the attempt that set it.
 *
 * When MailerLite fails (or the deadline comes), the click hands the entry to its own finish task
 * (privacy/finish-erasure.ts), which Cloud Tasks retries with backoff until MailerLite answers; a second click
 * finishes it too, and privacy/pending-erasures.ts, every half hour, is the net for an attempt that died
 * before its task was enqueued. A click on an erasure already finished costs two reads (the entry, one
 * query) and no MailerLite request: only rows stored since (a suppressed mailbox signed up again, which
 * mails nobody) are deleted. The thank-you record stays (it holds no address), less the id of the row it
 * thanked: what keeps a mailbox from being thanked again outlives the erasure, and nothing that named a row
 * of it (an id a client chose before the rules allowed only the SDK's ids could spell an address) does.
 */

/** Other spellings of one mailbox sealed for MailerLite's forget; a bot's further spellings are only deleted. */
export const MAX_ALIASES = 50;

export interface EraseDeps {
  db: Firestore;
  client: MailerLiteClient;
  clock: Clock;
  logger: Logger;
  request?: RequestOptions;
  /** When the erasure must stop and leave the rest to its finish task (or privacy/pending-erasures.ts). */
  deadline?: number;
  /**
   * The suppression list (which seals the addresses until MailerLite has forgotten them, and hands what
   * MailerLite left of a click's erasure to the entry's finish task) and the contact records.
   */
  mailboxes: Mailboxes;
  /** Tests stop the erasure here, as a crash would. */
  afterStep?: (step: ErasureStep) => Promise<void> | void;
}

export type ErasureStep = 'marked' | 'rows_deleted' | 'forgotten';

export interface ErasureReport {
  signups: number;
  /**
   * What MailerLite was asked: forgotten now, not a subscriber, left pending (it failed, or the deadline
   * came first), or nothing to ask (the mailbox was erased before and has been on the list since).
   */
  mailerLite: 'forgotten' | 'absent' | 'pending' | 'unchanged';
}

/** Erases the mailbox of the address a link was made for (see above). Only a Firestore failure is thrown. */
export async function eraseAddress(emailAsTyped: string, deps: EraseDeps): Promise<ErasureReport> {
  const email = normaliseEmail(emailAsTyped);
  const { suppression } = deps.mailboxes;
  const ref = suppression.ref(email);
  const entry = await ref.get();
  if (entry.exists && !isPending(entry)) {
    const signups = await deleteRows(ref.id, [], deps);
    deps.logger.info('unsubscribe.repeated', { ...emailFields(email), signups: signups.deleted });
    return { signups: signups.deleted, mailerLite: 'unchanged' };
  }
  // An earlier attempt that did not finish: its addresses are this one's too (the mark keeps their seals).
  const earlier = entry.exists ? (suppression.sealedAddresses(entry) ?? []) : [];
  const others = [...new Set(earlier.map(normaliseEmail))].filter((address) => address !== email);
  const attempt = await suppression.markPending(emailAsTyped, deps.clock.now());
  await deps.afterStep?.('marked');
  const report = await finishErasure(ref, attempt, [emailAsTyped, ...others], deps);
  // A second click while an earlier mark waits names the earlier mark's task: one task per wait.
  const mark = entry.exists && isPending(entry) ? String(entry.get(PENDING_ID)) : attempt;
  // What is left goes to the entry's finish task. A failure to enqueue does not fail the click (the rows are
  // gone and the mailbox is suppressed): it is logged, and the half-hourly job finishes the entry.
  if (report.mailerLite === 'pending' && (await suppression.handOff(ref.id, mark)) === 'enqueue_failed') {
    deps.logger.warn('unsubscribe.enqueue_failed', { finish_task: 'enqueue_failed' });
  }
  return report;
}

/**
 * What is left of the erasure a suppression entry's mark stands for, finished (finishErasure) with the
 * addresses it holds sealed: by the entry's finish task (privacy/finish-erasure.ts) and by
 * privacy/pending-erasures.ts. `unopenable` when they were sealed with another secret (UNSUBSCRIBE_SECRET
 * rotated): nothing is done, and the mark stays for an operator.
 */
export async function finishPendingEntry(
  entry: DocumentSnapshot,
  deps: EraseDeps,
): Promise<'finished' | 'pending' | 'unopenable' | 'not_pending'> {
  if (!isPending(entry)) return 'not_pending';
  const addresses = deps.mailboxes.suppression.sealedAddresses(entry);
  if (!addresses) return 'unopenable';
  const report = await finishErasure(entry.ref, String(entry.get(PENDING_ID)), addresses, deps);
  return report.mailerLite === 'pending' ? 'pending' : 'finished';
}

/**
 * Steps 2 to 4 for an entry whose mark `attempt` set: the rows, MailerLite, the mark. `addresses` are the
 * sealed ones (the link's, then the aliases found before). Used by the click and by finishPendingEntry.
 */
export async function finishErasure(
  ref: DocumentReference,
  attempt: string,
  addresses: readonly string[],
  deps: EraseDeps,
): Promise<ErasureReport> {
  const email = normaliseEmail(addresses[0] ?? '');
  // Other spellings are sealed before their rows go, so a crash cannot lose them.
  const rows = await deleteRows(ref.id, addresses, deps, (aliases) =>
    deps.mailboxes.suppression.sealAliases(ref, aliases),
  );
  if (!rows.finished) {
    deps.logger.warn('unsubscribe.erasure_pending', {
      ...emailFields(email),
      reason: 'deadline',
      signups: rows.deleted,
    });
    return { signups: rows.deleted, mailerLite: 'pending' };
  }
  await deps.afterStep?.('rows_deleted');

  // The spelling MailerLite knows the mailbox by (privacy/mailerlite-contacts.ts), if no row names it any more.
  const record = deps.mailboxes.contacts.ref(email);
  const recorded = await record.get();
  const known = recorded.get('email');
  const forget = [...new Set([...rows.addresses, ...(typeof known === 'string' ? [known] : [])])];
  let outcome: ErasureReport['mailerLite'] = 'absent';
  for (const address of forget) {
    try {
      if (await deps.client.forgetSubscriber(address, deps.request)) outcome = 'forgotten';
    } catch (error) {
      if (!(error instanceof MailerLiteError)) throw error;
      deps.logger.warn('unsubscribe.forget_pending', { ...emailFields(email), error: error.name });
      return { signups: rows.deleted, mailerLite: 'pending' };
    }
  }
  await deps.afterStep?.('forgotten');
  if (pushInFlight(recorded, deps.clock.now())) {
    // A contact task holds the mailbox's push (deliver-contact.ts): its upsert may land after these forgets,
    // and should the task die before its own check, nobody would undo it. The mark stays, and the entry's
    // finish task forgets again once the push's lease has run out.
    deps.logger.warn('unsubscribe.erasure_pending', { ...emailFields(email), reason: 'push_in_flight' });
    return { signups: rows.deleted, mailerLite: 'pending' };
  }
  await record.delete();
  await forgetThankedRow(deps.db.collection(THANK_YOU_MAILS).doc(ref.id));
  await clearPending(ref, attempt);
  deps.logger.info('unsubscribe.erased', {
    ...emailFields(email),
    signups: rows.deleted,
    mailerlite: outcome,
    aliases: rows.addresses.length - 1,
  });
  return { signups: rows.deleted, mailerLite: outcome };
}

/**
 * Drops the id of the row the mailbox's thank-you record names: the row is erased, and the record keeps only
 * whether the mailbox was thanked, and at which kind of spelling (delivery/deliver-thank-you.ts). A record a
 * thank-you task holds (`sending`, by a task that read the suppression list just before the click: it sends
 * nothing once it reads it again) is left with it, as is one that changed between the read and the write:
 * the two races a click meets only while a task of the mailbox runs.
 */
async function forgetThankedRow(record: DocumentReference): Promise<void> {
  const thanks = await record.get();
  if (!thanks.exists || thanks.get('signup') === undefined || thanks.get('state') === 'sending') return;
  try {
    await record.update({ signup: FieldValue.delete() }, { lastUpdateTime: thanks.updateTime });
  } catch (error) {
    // 9 FAILED_PRECONDITION: changed since the read; 5 NOT_FOUND: gone.
    const code = (error as { code?: unknown }).code;
    if (code !== 9 && code !== 5) throw error;
  }
}

/**
 * Deletes the mailbox's rows page by page until none is left or the deadline comes. `addresses` are the
 * spellings the caller knows (their rows are found even before the trigger keyed them); each other spelling
 * found is handed to `sealAliases` before its rows are deleted. Returns every distinct address, normalised.
 */
async function deleteRows(
  key: string,
  addresses: readonly string[],
  deps: EraseDeps,
  sealAliases?: (aliases: string[]) => Promise<void>,
): Promise<{ deleted: number; finished: boolean; addresses: string[] }> {
  const known = new Set(addresses.map(normaliseEmail));
  let deleted = 0;
  for (;;) {
    if (deps.deadline !== undefined && deps.clock.now() >= deps.deadline) {
      return { deleted, finished: false, addresses: [...known] };
    }
    const page = await mailboxSignups(deps.db, key, ROWS_PER_QUERY);
    for (const address of addresses) {
      if (page.length >= ROWS_PER_QUERY) break;
      for (const row of await storedSignups(deps.db, address, ROWS_PER_QUERY - page.length)) {
        if (!page.some((doc) => doc.id === row.id)) page.push(row);
      }
    }
    if (page.length === 0) return { deleted, finished: true, addresses: [...known] };
    const found = new Set(
      page
        .map((row) => row.get('email'))
        .filter((value): value is string => typeof value === 'string')
        .map(normaliseEmail),
    );
    const aliases = [...found]
      .filter((address) => !known.has(address))
      .slice(0, Math.max(0, MAX_ALIASES + 1 - known.size));
    if (aliases.length > 0 && sealAliases) {
      await sealAliases(aliases);
      for (const alias of aliases) known.add(alias);
    }
    const batch = deps.db.batch();
    for (const row of page) batch.delete(row.ref);
    await batch.commit();
    deleted += page.length;
  }
}
