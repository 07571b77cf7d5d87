import { createHmac } from 'node:crypto';
import type { DocumentReference, Firestore } from 'firebase-admin/firestore';
import { normaliseEmail } from '../contract';
import { firestoreSdk } from '../firestore';
import type { Logger } from '../logs';
import { MAILBOX_PROVIDERS } from './providers';

/**
 * The mail budget: at most `perHour` thank-you mails leave in one clock hour (UTC), whatever a bot stores and
 * whatever outages, retries and re-drives do. A sender's reputation is what a teen brand's launch mail depends
 * on, and providers rate a sender by its bursts and its complaints.
 *
 * A mail leaves only on a slot of the hour it leaves in. A slot is booked (bookMailSlot) in the first hour from
 * now with room, for the whole budget and for the mail's domain: this hour, when it has room, and the mail is
 * sent now; a later one otherwise, and the thank-you waits until that hour (delivery/deliver-thank-you.ts: the
 * mailbox's record keeps the hour booked, and the part's next round is enqueued to run then). A slot is
 * honoured only in its own hour: a send that comes later (a relay refusing us through the hour, a task retried
 * after an outage) books again from the hour it is in. So an hour counts every slot that may send in it, and
 * after an outage the waiting mails leave at the budget's pace in the order they booked.
 *
 * The count is kept in `_mail_budget/{hour}-{shard}`, SHARDS documents an hour, each taking at most its
 * share; a sender picks a shard at random and tries the others when it is full, so at the thank-you queue's
 * 20 mails a second no one document takes more than about one write a second (Firestore's sustained rate
 * for a document). Once every shard of an hour is full, `{hour}-reached` says so: a booking passes a full
 * hour with one read (and a domain's spent share with one more), so booking costs a read per hour the mail
 * will wait, and nothing while it waits. The retention job deletes past hours.
 *
 * A slot is taken without a transaction: the sender adds one to the shard's count (an atomic increment,
 * which takes no lock), then reads the count back; it holds a slot when what it reads is within the share.
 * Every read comes after its own increment, so the count read is at least the sender's own place in line,
 * and no more than `share` senders of a shard can read a count within it: never more than perHour slots
 * an hour. A sender that reads past the share takes its increment off again (giveBack), so senders that
 * raced for a shard's last slot leave it for the next one rather than unused for the hour. A transaction
 * instead held a lock on the shard for three round trips, and ten senders at once waited on each other
 * until Firestore gave up.
 */
export const MAIL_BUDGETS = '_mail_budget';
export const SHARDS = 32;
/**
 * The budget's window: a clock hour. MAIL_BUDGET_WINDOW_SECONDS shortens it, read when the functions load
 * (functions/.env.<project>; the stack tests and benchmarks compress the hour with it, as they compress
 * MailerLite's minute).
 */
const HOUR_MS = windowSeconds(process.env.MAIL_BUDGET_WINDOW_SECONDS) * 1000;

/** The budget's window (its hour) `now` falls in, as a number. */
export function budgetHour(now: number): number {
  return Math.floor(now / HOUR_MS);
}

/** When the budget's window `hour` starts (clock ms). */
export function hourStart(hour: number): number {
  return hour * HOUR_MS;
}

function windowSeconds(raw: string | undefined): number {
  const value = Number(raw);
  return raw && Number.isInteger(value) && value > 0 ? value : 60 * 60;
}

/**
 * One domain's share of an hour's budget. A catch-all domain is the cheap bot: every `anything@its.domain`
 * is a mailbox, so folding spellings (privacy/mailbox-key.ts) does not make its burst one mailbox. Its
 * mails past the share book later hours, and the rest of the budget stays for everyone else: a sign-up
 * waits only behind those of its own domain that booked before it (and, when the whole budget is booked,
 * behind everyone who booked before it).
 */
export const DOMAIN_SHARE = 0.1;
/** A share no smaller than this, so a small budget still lets a school's sign-ups through in an hour. */
export const DOMAIN_SHARE_MIN = 10;

/**
 * Mail providers where one address is one person's mailbox (no catch-all): their sign-ups count only
 * against the whole budget. Anyone can get a mailbox there, but a burst of them costs a bot a real account
 * each, and with their aliases folded a burst of spellings is one mailbox.
 */
const SHARED_PROVIDERS = MAILBOX_PROVIDERS;

/**
 * The key the domain's share is counted under (a keyed hash: the budget's documents hold no domain), or
 * null for a shared provider, which has no share of its own.
 */
export function domainKey(mailboxSecret: string, email: string): string | null {
  const domain = normaliseEmail(email).split('@').pop() ?? '';
  if (SHARED_PROVIDERS.has(domain)) return null;
  return createHmac('sha256', mailboxSecret)
    .update(`mail-budget-domain\n${domain}`)
    .digest('base64url')
    .slice(0, 22);
}

/**
 * Books a slot in the first hour from `now`'s on with room for the whole budget and for the domain's share
 * (domainKey's answer; null: a shared provider, the whole budget only), and answers that hour. Every hour
 * passed on the way was full for one of the two when it was read: a booking lands no earlier than those of
 * its domain booked before it.
 */
export async function bookMailSlot(
  db: Firestore,
  options: {
    now: number;
    perHour: number;
    domain: string | null;
    logger: Logger;
    random?: () => number;
  },
): Promise<number> {
  // A budget of none would book no hour, ever.
  if (!(options.perHour >= 1)) throw new Error('MAIL_PER_HOUR must be at least 1.');
  for (let hour = budgetHour(options.now); ; hour += 1) {
    if (await takeSlotIn(db, hour, options)) return hour;
  }
}

/** A slot of `hour`, for the whole budget and the domain's share, or false (nothing taken) when either is full. */
async function takeSlotIn(
  db: Firestore,
  hour: number,
  options: { perHour: number; domain: string | null; logger: Logger; random?: () => number },
): Promise<boolean> {
  const reached = db.collection(MAIL_BUDGETS).doc(`${hour}-reached`);
  if ((await reached.get()).exists) return false;
  const domain = options.domain ? db.collection(MAIL_BUDGETS).doc(`${hour}-domain-${options.domain}`) : null;
  const share = Math.max(DOMAIN_SHARE_MIN, Math.ceil(options.perHour * DOMAIN_SHARE));
  if (domain && !(await takeFrom(domain, share, hour))) return false;
  // The shards' shares add up to perHour: the first ones take one more when it does not divide.
  const shareOf = (shard: number) =>
    Math.floor(options.perHour / SHARDS) + (shard < options.perHour % SHARDS ? 1 : 0);
  const first = Math.floor((options.random ?? Math.random)() * SHARDS);
  for (let step = 0; step < SHARDS; step += 1) {
    const shard = (first + step) % SHARDS;
    const limit = shareOf(shard);
    if (limit === 0) continue;
    if (await takeFrom(db.collection(MAIL_BUDGETS).doc(`${hour}-${shard}`), limit, hour)) return true;
  }
  // The whole hour is full: the domain's slot goes back, and the hour is marked, once.
  if (domain) await giveBack(domain);
  const marked = await reached.create({ hour_start: new Date(hour * HOUR_MS) }).then(
    () => true,
    () => false,
  );
  if (marked) {
    options.logger.warn('thank_you.budget_reached', {
      per_hour: options.perHour,
      hour: new Date(hour * HOUR_MS).toISOString(),
    });
  }
  return false;
}

/**
 * A slot of one count (a shard, or a domain's share) of `hour` whose limit is `limit`: an increment and a read
 * back (above). A full count costs a read, not a write.
 */
async function takeFrom(ref: DocumentReference, limit: number, hour: number): Promise<boolean> {
  const sentOf = async () => Number((await ref.get()).get('sent') ?? 0);
  if ((await sentOf()) >= limit) return false;
  const { FieldValue } = await firestoreSdk();
  await ref.set({ sent: FieldValue.increment(1), hour_start: new Date(hour * HOUR_MS) }, { merge: true });
  if ((await sentOf()) <= limit) return true;
  await giveBack(ref);
  return false;
}

/**
 * A sender that read its shard past the share holds no slot: its increment is taken off again. Senders
 * that raced for a shard's last slot would otherwise all read past it and leave it unused for the hour.
 * A holder never gives back, so a count read is still at least the holders plus the reader: never more than
 * the share is granted.
 */
async function giveBack(ref: DocumentReference): Promise<void> {
  const { FieldValue } = await firestoreSdk();
  await ref.set({ sent: FieldValue.increment(-1) }, { merge: true });
}
