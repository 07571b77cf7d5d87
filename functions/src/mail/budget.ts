import { createHmac } from 'node:crypto';
import { type DocumentReference, FieldValue, type Firestore } from 'firebase-admin/firestore';
import { normaliseEmail } from '../contract';
import type { Logger } from '../logs';
import { MAILBOX_PROVIDERS } from './providers';

/**
 * At most `perHour` thank-yous leave in a clock hour, whatever bots, outages and retries do: providers rate a
 * new sender by its bursts. A mail leaves only on a slot of the hour it leaves in, booked in the first hour
 * with room for the budget and its domain; a slot is honoured only in its own hour, so after an outage the
 * waiting mails leave at the budget's pace, in the order they booked.
 *
 * Counts live in `_mail_budget/{hour}-{shard}`, sharded to stay near Firestore's one write a second per
 * document at 20 mails a second; `{hour}-reached` lets a booking pass a full hour with one read. A slot is an
 * atomic increment read back (held when within the share), no transaction: a transaction's lock made ten
 * senders at once wait until Firestore gave up.
 */
export const MAIL_BUDGETS = '_mail_budget';
export const SHARDS = 32;
/** A clock hour; MAIL_BUDGET_WINDOW_SECONDS (whole seconds) shortens it for the stack tests and benchmarks. */
const WINDOW_SECONDS = Number(process.env.MAIL_BUDGET_WINDOW_SECONDS);
const HOUR_MS = (Number.isInteger(WINDOW_SECONDS) && WINDOW_SECONDS > 0 ? WINDOW_SECONDS : 60 * 60) * 1000;

/** The budget's window (its hour) `now` falls in, as a number. */
export function budgetHour(now: number): number {
  return Math.floor(now / HOUR_MS);
}

/** When the budget's window `hour` starts (clock ms). */
export function hourStart(hour: number): number {
  return hour * HOUR_MS;
}

/**
 * What a send may take, from the last check of its slot to the relay's receipt: a tenth of the hour, a minute
 * at most. A slot is honoured only by a send that ends in its hour, so none is received in the next.
 */
const SEND_MS = Math.min(60_000, HOUR_MS / 10);

/** The hour a send begun at `now` counts in; null in an hour's last SEND_MS, when it could end in the next. */
export function sendHour(now: number): number | null {
  const hour = budgetHour(now);
  return budgetHour(now + SEND_MS) === hour ? hour : null;
}

/**
 * One domain's share of an hour: a catch-all domain is the cheap bot (every name is a mailbox), so its burst
 * books later hours and leaves the rest of the budget to everyone else.
 */
export const DOMAIN_SHARE = 0.1;
/** A share no smaller than this, so a small budget still lets a school's sign-ups through in an hour. */
export const DOMAIN_SHARE_MIN = 10;

/**
 * The domain's share key, a keyed hash (the budget holds no domain); null for a provider without catch-all
 * (MAILBOX_PROVIDERS), which counts only against the whole budget: a burst there costs a bot real accounts.
 */
export function domainKey(mailboxSecret: string, email: string): string | null {
  const domain = normaliseEmail(email).split('@').pop() ?? '';
  if (MAILBOX_PROVIDERS.has(domain)) return null;
  return createHmac('sha256', mailboxSecret)
    .update(`mail-budget-domain\n${domain}`)
    .digest('base64url')
    .slice(0, 22);
}

interface BookingOptions {
  perHour: number;
  domain: string | null;
  logger: Logger;
  random?: () => number;
}

/** Books a slot in the first hour from now with room for the budget and the domain's share: that hour. */
export async function bookMailSlot(
  db: Firestore,
  options: BookingOptions & { now: number },
): Promise<number> {
  // A budget of none would book no hour, ever.
  if (!(options.perHour >= 1)) throw new Error('MAIL_PER_HOUR must be at least 1.');
  for (let hour = budgetHour(options.now); ; hour += 1) {
    if (await takeSlotIn(db, hour, options)) return hour;
  }
}

/** A slot of `hour`, for the whole budget and the domain's share, or false (nothing taken) when either is full. */
async function takeSlotIn(db: Firestore, hour: number, options: BookingOptions): Promise<boolean> {
  const reached = db.collection(MAIL_BUDGETS).doc(`${hour}-reached`);
  if ((await reached.get()).exists) return false;
  const domain = options.domain ? db.collection(MAIL_BUDGETS).doc(`${hour}-domain-${options.domain}`) : null;
  const share = Math.max(DOMAIN_SHARE_MIN, Math.ceil(options.perHour * DOMAIN_SHARE));
  if (domain && !(await takeFrom(domain, share, hour))) return false;
  const first = Math.floor((options.random ?? Math.random)() * SHARDS);
  for (let step = 0; step < SHARDS; step += 1) {
    const shard = (first + step) % SHARDS;
    // The shards' shares add up to perHour: the first ones take one more when it does not divide.
    const limit = Math.floor(options.perHour / SHARDS) + (shard < options.perHour % SHARDS ? 1 : 0);
    if (limit === 0) continue;
    if (await takeFrom(db.collection(MAIL_BUDGETS).doc(`${hour}-${shard}`), limit, hour)) return true;
  }
  // The whole hour is full: the domain's slot goes back, and the hour is marked, once.
  if (domain) await giveBack(domain);
  const marked = await reached.create({ hour_start: new Date(hourStart(hour)) }).catch(() => null);
  if (marked) {
    options.logger.warn('thank_you.budget_reached', {
      per_hour: options.perHour,
      hour: new Date(hourStart(hour)).toISOString(),
    });
  }
  return false;
}

/** A slot of one count (a shard, or a domain's share): an increment read back; a full count costs a read. */
async function takeFrom(ref: DocumentReference, limit: number, hour: number): Promise<boolean> {
  const sentOf = async () => Number((await ref.get()).get('sent') ?? 0);
  if ((await sentOf()) >= limit) return false;
  await ref.set({ sent: FieldValue.increment(1), hour_start: new Date(hourStart(hour)) }, { merge: true });
  if ((await sentOf()) <= limit) return true;
  await giveBack(ref);
  return false;
}

/** Taken off after reading past the share, so racers for the last slot leave it for the next one. */
async function giveBack(ref: DocumentReference): Promise<void> {
  await ref.set({ sent: FieldValue.increment(-1) }, { merge: true });
}
