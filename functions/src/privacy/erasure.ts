import { type DocumentReference, FieldValue, type Firestore } from 'firebase-admin/firestore';
import type { Clock } from '../clock';
import { normaliseEmail, THANK_YOU_MAILS } from '../contract';
import type { LogEvent, LogFields, Logger } from '../logs';
import type { MailerLiteClient } from '../mailerlite/client';
import { MailerLiteError } from '../mailerlite/errors';
import { mailboxSignups, ROWS_PER_QUERY, storedSignups } from '../signups/lookup';
import { emailFields } from './log-fields';
import type { Mailboxes } from './mailboxes';
import { pushInFlight } from './mailerlite-contacts';
import { clearPending } from './suppression';

/**
 * Erasing a mailbox, written ahead so a crash or outage at any step leaves work to finish, never a person
 * half-erased:
 * 1. the suppression entry, marked, the address sealed: from here nothing mails or pushes the mailbox;
 * 2. every row of it deleted, a page at a time, other spellings sealed into `aliases` first;
 * 3. MailerLite forgets each address and the spelling the contact record names; then the record goes;
 * 4. the mark cleared, only by the attempt that set it.
 * What MailerLite leaves goes to the entry's finish task (the half-hourly job is its net). The thank-you
 * record stays, less its row id, so the mailbox is never thanked again.
 */

/** Other spellings of one mailbox sealed for MailerLite's forget; a bot's further spellings are only deleted. */
const MAX_ALIASES = 50;

export interface EraseDeps {
  db: Firestore;
  client: MailerLiteClient;
  clock: Clock;
  logger: Logger;
  /**
   * When the erasure must stop and leave the rest to its finish task or job (finish-erasure.ts); MailerLite's
   * requests end by then too.
   */
  deadline?: number;
  mailboxes: Mailboxes;
  /** Tests stop the erasure here, as a crash would. */
  afterStep?: (step: ErasureStep) => Promise<void> | void;
}

export type ErasureStep = 'marked' | 'rows_deleted' | 'forgotten';

export interface ErasureReport {
  signups: number;
  /** `unchanged`: the mailbox was erased before and has been on the list since. */
  mailerLite: 'forgotten' | 'absent' | 'pending' | 'unchanged';
}

/** Erases the mailbox of the address a link was made for (see above). Only a Firestore failure is thrown. */
export async function eraseAddress(emailAsTyped: string, deps: EraseDeps): Promise<ErasureReport> {
  const email = normaliseEmail(emailAsTyped);
  const { suppression } = deps.mailboxes;
  const ref = suppression.ref(email);
  const entry = await ref.get();
  const pending = entry.get('pending') === true;
  if (entry.exists && !pending) {
    const signups = await deleteRows(ref, [], deps, false);
    deps.logger.info('unsubscribe.repeated', { ...emailFields(email), signups: signups.deleted });
    return { signups: signups.deleted, mailerLite: 'unchanged' };
  }
  // An earlier attempt that did not finish: its addresses are this one's too (the mark keeps their seals).
  const earlier = pending ? (suppression.sealedAddresses(entry) ?? []) : [];
  const others = [...new Set(earlier.map(normaliseEmail))].filter((address) => address !== email);
  const attempt = await suppression.markPending(emailAsTyped, deps.clock.now());
  await deps.afterStep?.('marked');
  const report = await finishErasure(ref, attempt, [emailAsTyped, ...others], deps);
  // A second click while an earlier mark waits names the earlier mark's task: one task per wait.
  const mark = pending ? String(entry.get('pending_id')) : attempt;
  // A failed enqueue does not fail the click (rows gone, mailbox suppressed): the half-hourly job ends it.
  if (report.mailerLite === 'pending' && (await suppression.handOff(ref.id, mark)) === 'enqueue_failed') {
    deps.logger.warn('unsubscribe.enqueue_failed', { finish_task: 'enqueue_failed' });
  }
  return report;
}

/** Steps 2 to 4 for the mark `attempt` set, with the sealed addresses (the link's, then the aliases). */
export async function finishErasure(
  ref: DocumentReference,
  attempt: string,
  addresses: readonly string[],
  deps: EraseDeps,
): Promise<ErasureReport> {
  // Other spellings are sealed before their rows go, so a crash cannot lose them.
  const rows = await deleteRows(ref, addresses, deps, true);
  const log = { ...emailFields(normaliseEmail(addresses[0] ?? '')), signups: rows.deleted };
  const pending = (event: LogEvent, fields: LogFields): ErasureReport => {
    deps.logger.warn(event, { ...log, ...fields });
    return { signups: rows.deleted, mailerLite: 'pending' };
  };
  if (!rows.finished) return pending('unsubscribe.erasure_pending', { reason: 'deadline' });
  await deps.afterStep?.('rows_deleted');

  // With the spelling MailerLite knows the mailbox by (privacy/mailerlite-contacts.ts), if no row names it any more.
  const forgot = await deps.mailboxes.suppression
    .forget(deps.client, rows.addresses, { deadline: deps.deadline })
    .catch((error) => {
      if (error instanceof MailerLiteError) return error;
      throw error;
    });
  if (forgot instanceof MailerLiteError) return pending('unsubscribe.forget_pending', { error: forgot.name });
  await deps.afterStep?.('forgotten');
  // A push in flight may land after these forgets: the mark stays, forgotten again once its lease ran out.
  if (pushInFlight(forgot.record, deps.clock.now())) {
    return pending('unsubscribe.erasure_pending', { reason: 'push_in_flight' });
  }
  await forgot.record.ref.delete();
  await forgetThankedRow(deps.db.collection(THANK_YOU_MAILS).doc(ref.id));
  await clearPending(ref, attempt);
  deps.logger.info('unsubscribe.erased', {
    ...log,
    mailerlite: forgot.kind,
    aliases: rows.addresses.length - 1,
  });
  return { signups: rows.deleted, mailerLite: forgot.kind };
}

/**
 * Drops the erased rows' ids from the thank-you record (`signup`, `tagged_signup`). One held `sending` (its task
 * re-reads the list before sending) or changed since the read is left as it is.
 */
async function forgetThankedRow(record: DocumentReference): Promise<void> {
  const thanks = await record.get();
  const named = thanks.get('signup') !== undefined || thanks.get('tagged_signup') !== undefined;
  if (!named || thanks.get('state') === 'sending') return;
  const gone = FieldValue.delete();
  await record
    .update({ signup: gone, tagged_signup: gone }, { lastUpdateTime: thanks.updateTime })
    .catch((error) => {
      // 9 FAILED_PRECONDITION: changed since the read; 5 NOT_FOUND: gone.
      if (error.code !== 9 && error.code !== 5) throw error;
    });
}

/**
 * Deletes the mailbox's rows (`entry` names it), by key and by the known spellings (rows the trigger has not
 * keyed yet), with `seal` sealing each other spelling into the entry before its rows go. Returns every
 * distinct address, normalised.
 */
async function deleteRows(
  entry: DocumentReference,
  addresses: readonly string[],
  deps: EraseDeps,
  seal: boolean,
) {
  const known = new Set(addresses.map(normaliseEmail));
  let deleted = 0;
  for (;;) {
    if (deps.clock.now() >= (deps.deadline ?? Number.POSITIVE_INFINITY)) {
      return { deleted, finished: false, addresses: [...known] };
    }
    const page = await mailboxSignups(deps.db, entry.id, ROWS_PER_QUERY);
    for (const address of addresses) {
      if (page.length >= ROWS_PER_QUERY) break;
      for (const row of await storedSignups(deps.db, address, ROWS_PER_QUERY - page.length)) {
        if (!page.some((doc) => doc.id === row.id)) page.push(row);
      }
    }
    if (page.length === 0) return { deleted, finished: true, addresses: [...known] };
    const found = page.map((row) => row.get('email')).filter((value) => typeof value === 'string');
    const aliases = [...new Set(found.map(normaliseEmail))]
      .filter((address) => !known.has(address))
      .slice(0, Math.max(0, MAX_ALIASES + 1 - known.size));
    if (aliases.length > 0 && seal) {
      await deps.mailboxes.suppression.sealAliases(entry, aliases);
      for (const alias of aliases) known.add(alias);
    }
    const batch = deps.db.batch();
    for (const row of page) batch.delete(row.ref);
    await batch.commit();
    deleted += page.length;
  }
}
