/**
 * The one reply of add-contact-to-mailerlite and send-thank-you-email to every well-formed call: both
 * only enqueue, so whether the address signed up, was already contacted or thanked, or fails downstream
 * is known to the workers and their logs, never to the caller. The page only logs these replies.
 */
export const ACCEPTED = Object.freeze({ status: 'accepted' as const });
export type Accepted = typeof ACCEPTED;
