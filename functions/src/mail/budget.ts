import type { Firestore } from 'firebase-admin/firestore';
import type { Logger } from '../logs';

/**
 * The mail budget: at most `perHour` thank-you mails leave in one clock hour (UTC), whatever a bot stores.
 * A sender's reputation is what a teen brand's launch mail depends on, and providers rate a sender by its
 * bursts and its complaints. A mail over the budget is not dropped: its task is retried by Cloud Tasks
 * (backoff up to 10 minutes, for two days) and goes out in a later hour.
 *
 * The count is kept in `_mail_budget/{hour}-{shard}`, SHARDS documents an hour, each taking at most its
 * share; a sender picks a shard at random and tries the others when it is full, so no one document takes
 * more than a few writes a second. The retention job deletes past hours.
 */
export const MAIL_BUDGETS = '_mail_budget';
export const SHARDS = 8;
const HOUR_MS = 60 * 60_000;

export type MailSlot = { granted: true } | { granted: false; nextHourAt: number };

export async function takeMailSlot(
  db: Firestore,
  options: { now: number; perHour: number; logger: Logger; random?: () => number },
): Promise<MailSlot> {
  const hour = Math.floor(options.now / HOUR_MS);
  const share = Math.ceil(options.perHour / SHARDS);
  // The shards' shares add up to perHour: the first ones take one more when it does not divide.
  const shareOf = (shard: number) => Math.max(0, Math.min(share, options.perHour - shard * share));
  const first = Math.floor((options.random ?? Math.random)() * SHARDS);
  for (let step = 0; step < SHARDS; step += 1) {
    const shard = (first + step) % SHARDS;
    const limit = shareOf(shard);
    if (limit === 0) continue;
    const ref = db.collection(MAIL_BUDGETS).doc(`${hour}-${shard}`);
    const taken = await db.runTransaction(async (transaction) => {
      const sent = Number((await transaction.get(ref)).get('sent') ?? 0);
      if (sent >= limit) return false;
      transaction.set(ref, { sent: sent + 1, hour_start: new Date(hour * HOUR_MS) }, { merge: true });
      return true;
    });
    if (taken) return { granted: true };
  }
  // Said once an hour: the first refusal creates the hour's marker, the later ones find it.
  const reported = await db
    .collection(MAIL_BUDGETS)
    .doc(`${hour}-reached`)
    .create({ hour_start: new Date(hour * HOUR_MS) })
    .then(
      () => true,
      () => false,
    );
  if (reported) {
    options.logger.warn('thank_you.budget_reached', {
      per_hour: options.perHour,
      hour: new Date(hour * HOUR_MS).toISOString(),
    });
  }
  return { granted: false, nextHourAt: (hour + 1) * HOUR_MS };
}
