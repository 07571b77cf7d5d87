import { createHmac } from 'node:crypto';
import type { DocumentReference, Firestore } from 'firebase-admin/firestore';
import { normaliseEmail } from '../contract';
import { firestoreSdk } from '../firestore';
import type { Logger } from '../logs';
import { MAILBOX_PROVIDERS } from './providers';

/**
 * The mail budget: at most `perHour` thank-you mails leave in one clock hour (UTC), whatever a bot stores.
 * A sender's reputation is what a teen brand's launch mail depends on, and providers rate a sender by its
 * bursts and its complaints. A mail over the budget is not dropped: it waits its turn in a line and goes
 * out in a later hour, oldest first (mail/turns.ts).
 *
 * The count is kept in `_mail_budget/{hour}-{shard}`, SHARDS documents an hour, each taking at most its
 * share; a sender picks a shard at random and tries the others when it is full, so at the thank-you queue's
 * 20 mails a second no one document takes more than about one write a second (Firestore's sustained rate
 * for a document). The retention job deletes past hours.
 *
 * A slot is taken without a transaction: the sender adds one to the shard's count (an atomic increment,
 * which takes no lock), then reads the count back; it holds a slot when what it reads is within the share.
 * Every read comes after its own increment, so the count read is at least the sender's own place in line,
 * and no more than `share` senders of a shard can read a count within it: never more than perHour mails
 * an hour. A sender that reads past the share takes its increment off again (giveBack), so senders that
 * raced for a shard's last slot leave it for the next one rather than unused for the hour. A transaction instead held a lock on the shard for
 * three round trips, and ten senders at once waited on each other until Firestore gave up.
 */
export const MAIL_BUDGETS = '_mail_budget';
export const SHARDS = 32;
/**
 * The budget's window: a clock hour. MAIL_BUDGET_WINDOW_SECONDS shortens it, read when the functions load
 * (functions/.env.<project>; the stack tests and benchmarks compress the hour with it, as they compress
 * MailerLite's minute).
 */
const HOUR_MS = windowSeconds(process.env.MAIL_BUDGET_WINDOW_SECONDS) * 1000;

/** The budget's window (its hour) `now` falls in, as a number: what a released thank-you's slot was counted in. */
export function budgetHour(now: number): number {
  return Math.floor(now / HOUR_MS);
}

function windowSeconds(raw: string | undefined): number {
  const value = Number(raw);
  return raw && Number.isInteger(value) && value > 0 ? value : 60 * 60;
}

/**
 * One domain's share of an hour's budget. A catch-all domain is the cheap bot: every `anything@its.domain`
 * is a mailbox, so folding spellings (privacy/mailbox-key.ts) does not make its burst one mailbox. Its
 * mails past the share wait for a later hour, and the rest of the budget stays for everyone else: a real
 * sign-up waits behind such a burst at most until the next hour, never to the end of its retries.
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
 * A slot, or why not: the domain's share of the hour is spent (other lines may still send), or the whole
 * budget is (nobody sends before `nextHourAt`).
 */
export type MailSlot = { granted: true } | { granted: false; spent: 'domain' | 'budget'; nextHourAt: number };

export async function takeMailSlot(
  db: Firestore,
  options: {
    now: number;
    perHour: number;
    /** domainKey's answer: the mail also counts against that domain's share. */
    domain?: string | null;
    logger: Logger;
    random?: () => number;
  },
): Promise<MailSlot> {
  const hour = budgetHour(options.now);
  if (options.domain && !(await takeDomainSlot(db, hour, options.domain, options.perHour))) {
    return { granted: false, spent: 'domain', nextHourAt: (hour + 1) * HOUR_MS };
  }
  // The shards' shares add up to perHour: the first ones take one more when it does not divide.
  const shareOf = (shard: number) =>
    Math.floor(options.perHour / SHARDS) + (shard < options.perHour % SHARDS ? 1 : 0);
  const first = Math.floor((options.random ?? Math.random)() * SHARDS);
  const { FieldValue } = await firestoreSdk();
  const reached = db.collection(MAIL_BUDGETS).doc(`${hour}-reached`);
  const spent: MailSlot = { granted: false, spent: 'budget', nextHourAt: (hour + 1) * HOUR_MS };
  let tried = 0;
  for (let step = 0; step < SHARDS; step += 1) {
    const shard = (first + step) % SHARDS;
    const limit = shareOf(shard);
    if (limit === 0) continue;
    // Counts only grow within an hour: once a sender found every shard full, the hour is spent, and a
    // task held back by it costs two reads a retry, not one a shard.
    if (tried === 1 && (await reached.get()).exists) return spent;
    tried += 1;
    const ref = db.collection(MAIL_BUDGETS).doc(`${hour}-${shard}`);
    const sentOf = async () => Number((await ref.get()).get('sent') ?? 0);
    // A full shard costs a read, not a write.
    if ((await sentOf()) >= limit) continue;
    await ref.set({ sent: FieldValue.increment(1), hour_start: new Date(hour * HOUR_MS) }, { merge: true });
    if ((await sentOf()) <= limit) return { granted: true };
    await giveBack(ref);
  }
  // Said once an hour: the first refusal creates the hour's marker, the later ones find it.
  const reported = await reached.create({ hour_start: new Date(hour * HOUR_MS) }).then(
    () => true,
    () => false,
  );
  if (reported) {
    options.logger.warn('thank_you.budget_reached', {
      per_hour: options.perHour,
      hour: new Date(hour * HOUR_MS).toISOString(),
    });
  }
  return spent;
}

/**
 * Whether the hour came ahead of its own budget's lines: the hour before it spent the whole budget (its
 * `reached` marker, above), so thank-yous may wait for this one, and the release run (mail/turns.ts) has not
 * marked this hour `released` yet. A fresh thank-you then waits its turn in its line rather than take a slot
 * ahead of the oldest: one read while the last hour's budget held, two when it was spent.
 */
export async function beforeItsRelease(db: Firestore, now: number): Promise<boolean> {
  const hour = budgetHour(now);
  if (
    !(
      await db
        .collection(MAIL_BUDGETS)
        .doc(`${hour - 1}-reached`)
        .get()
    ).exists
  )
    return false;
  return !(await db.collection(MAIL_BUDGETS).doc(`${hour}-released`).get()).exists;
}

/** Marks the hour's lines released (mail/turns.ts): fresh thank-yous may take what the release left. */
export async function markReleased(db: Firestore, now: number): Promise<void> {
  const hour = budgetHour(now);
  await db
    .collection(MAIL_BUDGETS)
    .doc(`${hour}-released`)
    .set({ hour_start: new Date(hour * HOUR_MS) });
}

/**
 * A slot of the domain's share this hour: an increment and a read back, as a shard's (above). A domain
 * whose share is spent costs a read, not a write.
 */
async function takeDomainSlot(
  db: Firestore,
  hour: number,
  domain: string,
  perHour: number,
): Promise<boolean> {
  const share = Math.max(DOMAIN_SHARE_MIN, Math.ceil(perHour * DOMAIN_SHARE));
  const ref = db.collection(MAIL_BUDGETS).doc(`${hour}-domain-${domain}`);
  const sentOf = async () => Number((await ref.get()).get('sent') ?? 0);
  if ((await sentOf()) >= share) return false;
  const { FieldValue } = await firestoreSdk();
  await ref.set({ sent: FieldValue.increment(1), hour_start: new Date(hour * HOUR_MS) }, { merge: true });
  if ((await sentOf()) <= share) return true;
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
