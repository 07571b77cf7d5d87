import type { Firestore } from 'firebase-admin/firestore';
import { firestoreSdk } from '../firestore';
import type { Logger } from '../logs';

/**
 * The mail budget: at most `perHour` thank-you mails leave in one clock hour (UTC), whatever a bot stores.
 * A sender's reputation is what a teen brand's launch mail depends on, and providers rate a sender by its
 * bursts and its complaints. A mail over the budget is not dropped: its task is retried by Cloud Tasks
 * (backoff up to 10 minutes, for two days) and goes out in a later hour.
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
 * an hour. Senders that race for a shard's last slots may all read past it, and those slots go unused
 * that hour (the budget is a ceiling, not a quota). A transaction instead held a lock on the shard for
 * three round trips, and ten senders at once waited on each other until Firestore gave up.
 */
export const MAIL_BUDGETS = '_mail_budget';
export const SHARDS = 32;
const HOUR_MS = 60 * 60_000;

export type MailSlot = { granted: true } | { granted: false; nextHourAt: number };

export async function takeMailSlot(
  db: Firestore,
  options: { now: number; perHour: number; logger: Logger; random?: () => number },
): Promise<MailSlot> {
  const hour = Math.floor(options.now / HOUR_MS);
  // The shards' shares add up to perHour: the first ones take one more when it does not divide.
  const shareOf = (shard: number) =>
    Math.floor(options.perHour / SHARDS) + (shard < options.perHour % SHARDS ? 1 : 0);
  const first = Math.floor((options.random ?? Math.random)() * SHARDS);
  const { FieldValue } = await firestoreSdk();
  const reached = db.collection(MAIL_BUDGETS).doc(`${hour}-reached`);
  const spent: MailSlot = { granted: false, nextHourAt: (hour + 1) * HOUR_MS };
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
