import type { Clock } from '../clock';

/**
 * The one reply of add-contact-to-mailerlite and send-thank-you-email to every well-formed call:
 * whether the address signed up, was already contacted or thanked, or failed downstream stays in the
 * logs. The page only logs these replies.
 */
export const ACCEPTED = Object.freeze({ status: 'accepted' as const });
export type Accepted = typeof ACCEPTED;

/**
 * How long, at least, each of the two callables takes to answer, measured from the start of the
 * handler. A stranger's address costs one Firestore query; a stored one adds MailerLite or SMTP round
 * trips. Answering no earlier than the floor makes both take the floor, so a stopwatch learns nothing.
 * The figures (README, "Privacy") sit above the stored path's p95 with production round trips:
 * MailerLite's upsert and an SMTP send to a relay, with a cold TLS connection each.
 */
export const ADD_CONTACT_REPLY_FLOOR_MS = 900;
export const THANK_YOU_REPLY_FLOOR_MS = 1_500;

/** Waits until `floorMs` after `startedAt` (clock ms); returns at once when that time has passed. */
export async function waitForFloor(clock: Clock, startedAt: number, floorMs: number): Promise<void> {
  const remaining = startedAt + floorMs - clock.now();
  if (remaining > 0) await clock.sleep(remaining);
}
