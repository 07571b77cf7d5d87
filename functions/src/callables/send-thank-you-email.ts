import '../global-options';
import type { DocumentReference, Firestore, Timestamp } from 'firebase-admin/firestore';
import { HttpsError, onCall } from 'firebase-functions/v2/https';
import { withAppCheck } from '../app-check';
import { type Clock, systemClock } from '../clock';
import { CALLABLES, SIGNUPS, THANK_YOU_MAILS } from '../contract';
import { adminFirestore } from '../firestore';
import {
  claimLease,
  type Lease,
  type Claim as LeaseClaim,
  type LeaseLayout,
  LeaseLostError,
  millis,
} from '../lease';
import { cloudLogger, emailFields, type Logger, sha256Hex } from '../logs';
import { buildThankYouMessage } from '../mail/thank-you-message';
import { type MailTransport, smtpTransport } from '../mail/transport';
import { MAIL_FROM, SMTP_URL, UNSUBSCRIBE_SECRET, UNSUBSCRIBE_URL } from '../params';
import { ACCEPTED, type Accepted, THANK_YOU_REPLY_FLOOR_MS, waitForFloor } from '../privacy/reply-floor';
import { unsubscribeLink } from '../privacy/unsubscribe-token';
import {
  parseThankYouInput,
  SUBSCRIPTION_TYPES,
  type SubscriptionType,
  type ThankYouInput,
  validated,
} from '../schemas';

/** How long the function may run; the lease below must outlive it. */
export const THANK_YOU_TIMEOUT_SECONDS = 60;

/**
 * How long a claim to send stays exclusive. It outlives the function's timeout (and the SMTP timeouts
 * inside it), so when it has expired the sender is certainly gone: a later call may then send again
 * without racing it. A crash between the SMTP server accepting the message and the record saying
 * "sent" is the one case that can produce a second message; the resend carries the same Message-ID,
 * so mail clients show it as the same message.
 */
export const THANK_YOU_LEASE_MS = 5 * 60_000;

export type ThankYouState = 'sending' | 'sent' | 'failed';

/** `thank_you_mails/{sha256 of the normalised address}`. Holds no address. */
export interface ThankYouRecord {
  state: ThankYouState;
  attempts: number;
  attempt_id: string;
  subscription_type: SubscriptionType;
  claimed_at: Date | Timestamp;
  lease_expires_at: Date | Timestamp | null;
  sent_at?: Date | Timestamp;
  message_id?: string;
  failed_at?: Date | Timestamp;
  last_error?: string;
}

/** What happened, for the logs and the tests; the caller always gets ACCEPTED. */
export type ThankYouOutcome =
  | { status: 'sent' }
  | { status: 'already_sent' }
  | { status: 'in_progress' }
  | { status: 'unknown_address' }
  | { status: 'failed' };
type ThankYouResult = Extract<ThankYouOutcome, { status: 'sent' | 'already_sent' | 'in_progress' }>;

export interface SendThankYouDeps {
  db: Firestore;
  /** Called only when a message is really to be sent, so nodemailer loads only then. */
  transport: () => Promise<MailTransport>;
  from: string;
  /** The one-click unsubscribe link for an address as typed (unsubscribe-token.ts). */
  unsubscribeLink: (emailAsTyped: string) => string;
  clock: Clock;
  logger: Logger;
  leaseMs?: number;
  /** The reply floor (see reply-floor.ts); tests that do not time the reply set 0. */
  replyFloorMs?: number;
  /** Sees what happened; the reply does not say. */
  onOutcome?: (outcome: ThankYouOutcome) => void;
}

/**
 * One thank-you message per address, ever, and only for an address that signed up. The record is
 * claimed (lease.ts) before anything is sent; a second call (concurrent or later) sees the
 * claim and sends nothing. Every well-formed call gets the same reply at the same time
 * (reply-floor.ts), sent or not, stored or not, failed or not: the outcome is in the logs.
 */
export async function handleSendThankYouEmail(data: unknown, deps: SendThankYouDeps): Promise<Accepted> {
  const startedAt = deps.clock.now();
  const input = validated(CALLABLES.sendThankYou, deps.logger, parseThankYouInput, data);
  let outcome: ThankYouOutcome;
  try {
    outcome = await sendOnce(input, deps);
  } catch (error) {
    deps.logger.error('thank_you.failed', {
      ...emailFields(input.email),
      error: error instanceof HttpsError ? error.code : 'unknown',
    });
    outcome = { status: 'failed' };
  }
  deps.onOutcome?.(outcome);
  const floorMs = deps.replyFloorMs ?? THANK_YOU_REPLY_FLOOR_MS;
  const elapsedMs = deps.clock.now() - startedAt;
  if (elapsedMs > floorMs && floorMs > 0) {
    deps.logger.warn('reply.floor_exceeded', { callable: CALLABLES.sendThankYou, elapsed_ms: elapsedMs });
  }
  await waitForFloor(deps.clock, startedAt, floorMs);
  return ACCEPTED;
}

async function sendOnce(input: ThankYouInput, deps: SendThankYouDeps): Promise<ThankYouOutcome> {
  const log = emailFields(input.email);
  const id = sha256Hex(input.email);

  const subscriptionType = await storedSubscriptionType(deps.db, input.emailAsSent, input.email);
  if (!subscriptionType) {
    deps.logger.warn('thank_you.refused_unknown_address', log);
    return { status: 'unknown_address' };
  }

  const claim = await claimRecord(deps, deps.db.collection(THANK_YOU_MAILS).doc(id), subscriptionType);
  if (claim.status !== 'claimed') {
    deps.logger.info('thank_you.skipped', { ...log, reason: claim.status });
    return claim;
  }

  const message = buildThankYouMessage({
    to: input.email,
    from: deps.from,
    subscriptionType,
    recipientHash: id.slice(0, 32),
    unsubscribeUrl: deps.unsubscribeLink(input.emailAsSent),
  });
  try {
    const transport = await deps.transport();
    const sent = await transport.send(message);
    if (sent.accepted.length === 0)
      throw Object.assign(new Error('recipient refused'), { code: 'EENVELOPE' });
    await finish(claim.lease, {
      state: 'sent',
      sent_at: new Date(deps.clock.now()),
      message_id: sent.messageId,
    });
    deps.logger.info('thank_you.sent', { ...log, attempts: claim.attempts });
    return { status: 'sent' };
  } catch (error) {
    const code = smtpErrorCode(error);
    deps.logger.error('thank_you.failed', { ...log, attempts: claim.attempts, error: code });
    // Best effort: if even this write fails, the lease expires and a later call retries anyway.
    await finish(claim.lease, {
      state: 'failed',
      failed_at: new Date(deps.clock.now()),
      last_error: code,
    }).catch(() => undefined);
    return { status: 'failed' };
  }
}

type Claim = ThankYouResult | { status: 'claimed'; lease: Lease; attempts: number };

/** The record's lease: `attempt_id` names the call that holds it, `lease_expires_at` until when. */
const THANK_YOU_LEASE: LeaseLayout = {
  expiresAt: (data) => {
    const record = data as Partial<ThankYouRecord>;
    return record.state === 'sending' && record.lease_expires_at ? millis(record.lease_expires_at) : null;
  },
  fields: (owner, expiresAt) => ({ attempt_id: owner, lease_expires_at: expiresAt }),
};

/**
 * Claims the record for this call (see ../lease.ts): a `sent` record is never claimed again, a
 * `sending` one only once its lease has expired (its sender died), a `failed` one at once. Of two
 * calls at the same moment only one can claim it; the other reads again and sees the claim.
 */
async function claimRecord(
  deps: SendThankYouDeps,
  ref: DocumentReference,
  subscriptionType: SubscriptionType,
): Promise<Claim> {
  let claim: LeaseClaim<ThankYouResult>;
  try {
    claim = await claimLease<ThankYouResult>(
      ref,
      {
        owner: crypto.randomUUID(),
        clock: deps.clock,
        leaseMs: deps.leaseMs ?? THANK_YOU_LEASE_MS,
        layout: THANK_YOU_LEASE,
      },
      (previous, now) => {
        const record = previous as Partial<ThankYouRecord> | undefined;
        if (record?.state === 'sent') return { refuse: { status: 'already_sent' } };
        return {
          write: {
            state: 'sending',
            subscription_type: subscriptionType,
            claimed_at: new Date(now),
            attempts: (record?.attempts ?? 0) + 1,
          },
        };
      },
    );
  } catch {
    throw new HttpsError('unavailable', 'The database is unavailable right now. Please try again later.');
  }
  if (claim.status === 'held') return { status: 'in_progress' };
  if (claim.status === 'refused') return claim.reason;
  const previous = claim.previous as Partial<ThankYouRecord> | undefined;
  return { status: 'claimed', lease: claim.lease, attempts: (previous?.attempts ?? 0) + 1 };
}

/** The type of the first stored sign-up for this address, or null when it never signed up. */
async function storedSubscriptionType(
  db: Firestore,
  emailAsSent: string,
  normalised: string,
): Promise<SubscriptionType | null> {
  // Sign-ups are stored as typed; the page sends the same string, so the first query normally hits.
  for (const email of emailAsSent === normalised ? [normalised] : [emailAsSent, normalised]) {
    const result = await withDatabase(() =>
      db.collection(SIGNUPS).where('email', '==', email).limit(1).get(),
    );
    const type = result.docs[0]?.get('subscription_type');
    if (result.docs.length > 0) {
      return (SUBSCRIPTION_TYPES as readonly unknown[]).includes(type)
        ? (type as SubscriptionType)
        : 'updates';
    }
  }
  return null;
}

/** Moves the record on and ends the claim, unless another call has claimed it since (then that call owns it). */
async function finish(lease: Lease, fields: Partial<ThankYouRecord>): Promise<void> {
  try {
    await lease.release(fields);
  } catch (error) {
    if (!(error instanceof LeaseLostError)) throw error;
  }
}

/** A code for the record and the logs: nodemailer's error code and the SMTP reply code, never the text. */
function smtpErrorCode(error: unknown): string {
  const { code, responseCode } = (error ?? {}) as { code?: unknown; responseCode?: unknown };
  const parts = [
    typeof code === 'string' ? code : 'ERROR',
    typeof responseCode === 'number' ? responseCode : null,
  ];
  return parts.filter((part) => part !== null).join(' ');
}

async function withDatabase<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof HttpsError) throw error;
    throw new HttpsError('unavailable', 'The database is unavailable right now. Please try again later.');
  }
}

// Bound to its params here, at the edge; everything above takes them as arguments.
export const sendThankYouEmail = onCall(
  { secrets: [SMTP_URL, UNSUBSCRIBE_SECRET], timeoutSeconds: THANK_YOU_TIMEOUT_SECONDS },
  withAppCheck(CALLABLES.sendThankYou, async (request) => {
    const from = MAIL_FROM.value();
    if (!from)
      throw new HttpsError('failed-precondition', 'The thank-you mail has no sender: MAIL_FROM is not set.');
    const unsubscribeUrl = UNSUBSCRIBE_URL.value();
    if (!unsubscribeUrl)
      throw new HttpsError(
        'failed-precondition',
        'The thank-you mail has no unsubscribe link: UNSUBSCRIBE_URL is not set.',
      );
    return handleSendThankYouEmail(request.data, {
      db: await adminFirestore(),
      transport: () => smtpTransport(SMTP_URL.value()),
      from,
      unsubscribeLink: (email) => unsubscribeLink(unsubscribeUrl, UNSUBSCRIBE_SECRET.value(), email),
      clock: systemClock,
      logger: cloudLogger,
    });
  }),
);
