import { createHmac } from 'node:crypto';
import type { Firestore } from 'firebase-admin/firestore';
import { normaliseEmail } from '../contract';
import type { Logger } from '../logs';
import { MAILBOX_PROVIDERS } from './providers';

/**
 * At most `perHour` thank-yous leave in a clock hour, whatever bots, outages and retries do: providers rate a
 * new sender by its bursts. A mail leaves only on a slot of the hour it leaves in, booked in the first hour
 * with room for the budget and its domain; a slot is honoured only in its own hour, so after an outage the
 * waiting mails leave at the budget's pace, in the order they booked.
 *
 * A slot is a document of its own, `_mail_budget/{hour}-{n}` for n below perHour (`{hour}-{domain}-{n}` below a
 * domain's share), taken with `create()`: of any number of bookers at once exactly one takes each, and a create
 * retried after its answer was lost cannot take two. A booker counts the hour's slots (one aggregation read) and
 * creates slot number count: the taken slots are always 0..count-1, since a create at a count read either
 * extends them or finds the slot taken and counts again. So a count of perHour is a full hour, passed with that
 * one read, and no increment, lock or give-back is involved.
 */
export const MAIL_BUDGETS = '_mail_budget';
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

/**
 * A slot of `hour` for the whole budget and for the domain's share, or false when either is full. The domain's
 * is taken first: one left behind in an hour the whole budget then filled costs nobody a mail (none can leave
 * in that hour), where a budget slot left behind would.
 */
async function takeSlotIn(db: Firestore, hour: number, options: BookingOptions): Promise<boolean> {
  const budget = { db, hour, pool: String(hour), limit: options.perHour };
  const counted = await countOf(budget);
  if (counted >= budget.limit) return false;
  if (options.domain) {
    const share = Math.max(DOMAIN_SHARE_MIN, Math.ceil(options.perHour * DOMAIN_SHARE));
    if (!(await takeFrom({ db, hour, pool: `${hour}-${options.domain}`, limit: share }))) return false;
  }
  const taken = await takeFrom(budget, counted);
  if (taken === 'last') {
    // The hour's last slot is taken once: said once an hour.
    options.logger.warn('thank_you.budget_reached', {
      per_hour: options.perHour,
      hour: new Date(hourStart(hour)).toISOString(),
    });
  }
  return taken !== false;
}

/** The slots of one pool: an hour's whole budget, or one domain's share of it. */
interface Pool {
  db: Firestore;
  hour: number;
  pool: string;
  limit: number;
}

/** How many slots of the pool are taken: one aggregation read. */
async function countOf({ db, pool }: Pool): Promise<number> {
  return (await db.collection(MAIL_BUDGETS).where('pool', '==', pool).count().get()).data().count;
}

/**
 * Creates the pool's next slot (at `counted`, a count just read, or counted now), counted again after each one
 * found taken by a booker at once (each such conflict is a slot taken, so at most `limit` of them): true, or
 * 'last' for the pool's last slot; false when the pool is full.
 */
async function takeFrom(pool: Pool, counted?: number): Promise<boolean | 'last'> {
  for (let tries = 0; tries <= pool.limit; tries += 1) {
    const count = tries === 0 && counted !== undefined ? counted : await countOf(pool);
    if (count >= pool.limit) return false;
    const slot = pool.db.collection(MAIL_BUDGETS).doc(`${pool.pool}-${count}`);
    try {
      await slot.create({ pool: pool.pool, hour_start: new Date(hourStart(pool.hour)) });
      return count === pool.limit - 1 ? 'last' : true;
    } catch (error) {
      // 6 ALREADY_EXISTS: another booker took it first.
      if ((error as { code?: unknown }).code !== 6) throw error;
    }
  }
  return false;
}
