// What the functions' tests store and key: sign-ups as the page writes them, the tests' secrets, the
// mailboxes' keyed stores, a suppressed mailbox.

import type { DocumentReference, Firestore } from 'firebase-admin/firestore';
import {
  emailProblem,
  SIGNUPS,
  type SignupSource,
  SUPPRESSIONS,
  type SubscriptionType,
  subscriptionTypeOf,
} from '../src/contract';
import { DELIVERY, firstPart, next, type PartRecord } from '../src/delivery/part-life';
import { mailboxKey } from '../src/privacy/mailbox-key';
import { Mailboxes } from '../src/privacy/mailboxes';
import type { FinishErasureLater } from '../src/privacy/suppression';
import { MAILBOX_KEY_FIELD } from '../src/signups/lookup';

export interface Signup {
  email: string;
  subscription_type: SubscriptionType;
  source: SignupSource;
}

/** The two forms' sign-up fields, from the contract's pairing. */
export const HERO = { subscription_type: subscriptionTypeOf('hero_form'), source: 'hero_form' } as const;
export const FINAL = { subscription_type: subscriptionTypeOf('final_cta'), source: 'final_cta' } as const;

/** MAILBOX_KEY_SECRET in the tests (vitest.config.mts gives the logs the same). */
export const MAILBOX_SECRET = 'test-mailbox-key-secret';
/** UNSUBSCRIBE_SECRET in the tests. */
export const UNSUBSCRIBE_SECRET = 'test-unsubscribe-secret';

/**
 * The mailboxes' keyed stores as a function builds them once per invocation, under the tests' secrets; with
 * `finishErasureLater`, a mark left pending is handed to it (privacy/suppression.ts, handOff).
 */
export function testMailboxes(db: Firestore, finishErasureLater?: FinishErasureLater): Mailboxes {
  return new Mailboxes(db, { mailbox: MAILBOX_SECRET, unsubscribe: UNSUBSCRIBE_SECRET }, finishErasureLater);
}

/** Puts the address's mailbox on the suppression list, as a finished erasure leaves it. */
export async function suppressMailbox(db: Firestore, email: string): Promise<DocumentReference> {
  const ref = db.collection(SUPPRESSIONS).doc(mailboxKey(MAILBOX_SECRET, email));
  await ref.set({ erased_at: new Date() });
  return ref;
}

/** A part as the trigger leaves it once Cloud Tasks has its round-0 task (delivery/part-life.ts). */
export function enqueuedPart(at: number): PartRecord {
  return next(firstPart(at), { kind: 'enqueued', round: 0, runsAt: at }, at) as PartRecord;
}

/**
 * Stores sign-ups as the page does (auto ids, the four fields), with created_at one millisecond
 * apart in the order given so that "the order they were made in" is known to the test. Each row of a
 * valid address also gets its `mailbox_key` and its delivery state (both parts pending, round 0), as the
 * index-signup trigger writes them a moment later; `keyed: false` leaves them out (the moment before the
 * trigger ran).
 */
export async function seedSignups(
  db: Firestore,
  signups: Array<Signup | Record<string, unknown>>,
  start = Date.now(),
  { keyed = true }: { keyed?: boolean } = {},
) {
  const collection = db.collection(SIGNUPS);
  for (let offset = 0; offset < signups.length; offset += 400) {
    const batch = db.batch();
    signups.slice(offset, offset + 400).forEach((signup, index) => {
      const at = start + offset + index;
      const key =
        keyed && emailProblem(signup.email) === null
          ? {
              [MAILBOX_KEY_FIELD]: mailboxKey(MAILBOX_SECRET, signup.email as string),
              [DELIVERY]: { contact: enqueuedPart(at), thank_you: enqueuedPart(at) },
            }
          : {};
      batch.create(collection.doc(), { created_at: new Date(at), ...signup, ...key });
    });
    await batch.commit();
  }
}

/**
 * The task the row's trigger enqueues (round 0) for the latest stored sign-up of this exact spelling (and list, if
 * given): it names the row. With no such row, a task naming a row that does not exist (an erased one).
 */
export async function taskFor(
  db: Firestore,
  email: string,
  subscriptionType?: SubscriptionType,
): Promise<{ signup: string; round: number }> {
  let query = db.collection(SIGNUPS).where('email', '==', email);
  if (subscriptionType) query = query.where('subscription_type', '==', subscriptionType);
  const rows = (await query.get()).docs.sort(
    (a, b) => a.get('created_at').toMillis() - b.get('created_at').toMillis(),
  );
  return { signup: rows.at(-1)?.id ?? 'no-such-row', round: 0 };
}
