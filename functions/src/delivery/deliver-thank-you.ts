import '../global-options';
import type { DocumentReference, Firestore, Timestamp } from 'firebase-admin/firestore';
import { onTaskDispatched } from 'firebase-functions/v2/tasks';
import { type Clock, systemClock } from '../clock';
import { SUBSCRIPTION_TYPES, type SubscriptionType, THANK_YOU_MAILS } from '../contract';
import { adminFirestore, millisOf } from '../firestore';
import { claimLease, type Lease, type Claim as LeaseClaim, type LeaseLayout, LeaseLostError } from '../lease';
import { cloudLogger, type Logger } from '../logs';
import { bookMailSlot, budgetHour, hourStart } from '../mail/budget';
import { buildThankYouMessage, thankYouMessageToken } from '../mail/thank-you-message';
import { type MailTransport, type SentMail, smtpTransport } from '../mail/transport';
import {
  DEFAULTS,
  intParam,
  MAIL_FROM,
  MAIL_PER_HOUR,
  MAILBOX_KEY_SECRET,
  SMTP_URL,
  UNSUBSCRIBE_SECRET,
  UNSUBSCRIBE_URL,
} from '../params';
import { emailFields } from '../privacy/log-fields';
import { hasPlusTag } from '../privacy/mailbox-key';
import { type Mailboxes, mailboxesFromParams } from '../privacy/mailboxes';
import { parseThankYouInput, type ThankYouInput } from '../schemas';
import { cloudTasksEnqueue, positiveNumber, RETRY, RetryLater, withDatabase } from './queue';
import { type EnqueuePart, enqueuePart, openTask, rowOfTasks } from './row-delivery';

export const THANK_YOU_TIMEOUT_SECONDS = 60;

/**
 * Outlives the function's timeout, so an expired claim's sender is certainly gone. A crash between the relay
 * accepting and the record saying "sent" is the one way to a second mail; it carries the same Message-ID.
 */
export const THANK_YOU_LEASE_MS = 5 * 60_000;

/** Whether a thanked spelling has a `+tag`: a stranger can make one of any mailbox, the bare one is its own. */
export type ThankedSpelling = 'tagged' | 'bare';

/** `waiting`: claimed once, then given back until the hour of its slot of the mail budget (`slot`). */
export type ThankYouState = 'sending' | 'sent' | 'failed' | 'waiting';

export interface ThankYouRecord {
  state: ThankYouState;
  attempts: number;
  attempt_id: string;
  subscription_type: SubscriptionType;
  signup?: string;
  /** The spelling claimed (thanked, once `sent`); one thanked only tagged is thanked once more, bare. */
  spelling: ThankedSpelling;
  /** A tagged spelling of the mailbox was thanked before the bare one's claim: no tagged one is again. */
  tagged_thanked?: boolean;
  /** The row the tagged spelling's mail went out for, kept when the bare one claims: that row was thanked. */
  tagged_signup?: string;
  /** The budget hour of the mailbox's booked, unspent slot; honoured in that hour only, null once spent. */
  slot?: number | null;
  claimed_at: Date | Timestamp;
  lease_expires_at: Date | Timestamp | null;
  sent_at?: Date | Timestamp;
  message_id?: string;
  failed_at?: Date | Timestamp;
  last_error?: string;
}

/** What a task came to; a failure Cloud Tasks should retry is thrown (RetryLater) instead. */
export type ThankYouOutcome =
  | { status: 'sent' }
  | { status: 'already_sent'; byThisRow?: boolean }
  | { status: 'gone' }
  | { status: 'settled' }
  | { status: 'stale' }
  /** The relay accepted, the database did not save it: the next round saves it, never sending again. */
  | { status: 'sent_unsaved' }
  | { status: 'suppressed' }
  /** Over the mail budget: a slot booked in a later hour, the part's next round enqueued to run then. */
  | { status: 'waiting'; hour: number }
  /** The relay refused the person's own mailbox for good (smtpRefusal, `recipient`): the part is skipped. */
  | { status: 'failed' };
/** `byThisRow`: the mail went out for this very row (a duplicate task of it, a later round). */
type ThankYouResult = { status: 'already_sent'; byThisRow: boolean } | { status: 'in_progress' };

export interface DeliverThankYouDeps {
  db: Firestore;
  /** Called only when a message is really to be sent, so nodemailer loads only then. */
  transport: () => Promise<MailTransport>;
  /** MAIL_FROM; empty when unset (then the part waits, `configuration`, and the task is retried). */
  from: string;
  /** The one-click unsubscribe link for an address as typed (unsubscribe-token.ts); null when UNSUBSCRIBE_URL is unset. */
  unsubscribeLink: ((emailAsTyped: string) => string) | null;
  clock: Clock;
  logger: Logger;
  leaseMs?: number;
  mailboxes: Mailboxes;
  mailPerHour: number;
  /** Draws the budget's first shard to try (mail/budget.ts); Math.random unless the simulation draws from its seed. */
  random?: () => number;
  enqueuePart: EnqueuePart;
  saveRetryMs?: readonly number[];
}

/**
 * One thank-you per mailbox, ever, to the spelling stored on a live row and never to a suppressed mailbox;
 * one more at the bare spelling when only a `+tag` one (which anyone can make, and some providers bounce) was
 * thanked. The mailbox's record is claimed (lease.ts) before anything is spent, so of a burst of spellings
 * one sends and books one budget slot. Over the budget the task does not spend its retries: it books the
 * first hour with room and enqueues the next round for then. Of the relay's refusals only the person's own
 * mailbox ends the part; every other failure, our setup's included, is RetryLater.
 */
export async function handleDeliverThankYou(
  task: unknown,
  deps: DeliverThankYouDeps,
): Promise<ThankYouOutcome> {
  const open = await openTask(
    task,
    'thank_you',
    deps,
    (row) => parseThankYouInput({ email: row.get('email') }),
    async (input, row) => {
      if (!input.sent) return;
      // A mail the relay accepted, whose save a database failure stopped: saved now, never sent again.
      const email = (() => {
        try {
          return parseThankYouInput({ email: row.get('email') }).email;
        } catch {
          return null;
        }
      })();
      if (email) {
        const record = deps.db.collection(THANK_YOU_MAILS).doc(deps.mailboxes.key(email));
        await withDatabase(() => settleUnsaved(record, input.sent as string, deps.clock.now()));
      }
    },
  );
  if (open === 'malformed' || open === 'not_an_address') return { status: 'failed' };
  if (typeof open === 'string') return { status: open };
  const { row, round, stored, delivery, apply } = open;
  const type = row.get('subscription_type');
  const subscriptionType = (SUBSCRIPTION_TYPES as readonly unknown[]).includes(type)
    ? (type as SubscriptionType)
    : 'updates';
  try {
    const missing = !deps.from ? 'MAIL_FROM' : !deps.unsubscribeLink ? 'UNSUBSCRIBE_URL' : null;
    if (missing) {
      deps.logger.error('thank_you.not_configured', { missing });
      throw new RetryLater('A setting of the thank-you is missing.', `setting ${missing}`, 'configuration');
    }
    const outcome = await sendOnce(stored, subscriptionType, row.id, deps);
    if (outcome.status === 'waiting') {
      const runsAt = hourStart(outcome.hour);
      await withDatabase(() => deps.enqueuePart('thank_you', rowOfTasks(row), round + 1, runsAt));
      await apply({ kind: 'waits', round: round + 1, runsAt });
    } else if (outcome.status === 'sent') await apply({ kind: 'done', round });
    else if (outcome.status === 'already_sent' && outcome.byThisRow) await apply({ kind: 'done', round });
    else if (outcome.status === 'already_sent')
      await apply({ kind: 'skipped', round, reason: 'already_thanked' });
    else if (outcome.status === 'suppressed') await apply({ kind: 'skipped', round, reason: 'suppressed' });
    else if (outcome.status === 'failed') await apply({ kind: 'skipped', round, reason: 'refused' });
    return outcome;
  } catch (error) {
    if (error instanceof UnsavedSend) {
      // Cloud Tasks keeps what the database could not; acknowledged, so no retry of this task claims again.
      const handed = await deps
        .enqueuePart('thank_you', rowOfTasks(row), round + 1, undefined, { sent: error.attempt })
        .catch(() => null);
      if (handed === 'enqueued') {
        deps.logger.warn('thank_you.sent_unsaved', { ...emailFields(stored.email), round: round + 1 });
        return { status: 'sent_unsaved' };
      }
    }
    const retry =
      error instanceof RetryLater
        ? error
        : new RetryLater('The database or Cloud Tasks is unavailable.', 'database');
    await delivery.recordRetry(round, retry, deps.clock.now());
    throw retry;
  }
}

async function sendOnce(
  input: ThankYouInput,
  subscriptionType: SubscriptionType,
  signup: string,
  deps: DeliverThankYouDeps,
): Promise<ThankYouOutcome> {
  const log = emailFields(input.email);
  const id = deps.mailboxes.key(input.email);

  if (await suppression(deps, input.email)) {
    deps.logger.info('thank_you.skipped', { ...log, reason: 'suppressed' });
    return { status: 'suppressed' };
  }
  const record = deps.db.collection(THANK_YOU_MAILS).doc(id);
  const claim = await claimRecord(deps, record, input.email, subscriptionType, signup);
  if (claim.status === 'in_progress') {
    // Another task holds the claim: it sends, or its lease runs out and this one does, later.
    deps.logger.info('thank_you.skipped', { ...log, reason: claim.status });
    throw new RetryLater('Another task is sending this thank-you.', 'in_progress');
  }
  if (claim.status !== 'claimed') {
    deps.logger.info('thank_you.skipped', { ...log, reason: claim.status });
    return claim;
  }
  // Asked only by the claim's holder: a task that finds the mailbox thanked or in progress spends none.
  const now = budgetHour(deps.clock.now());
  let slot: number;
  try {
    slot = claim.slot !== null && claim.slot >= now ? claim.slot : await bookSlot(deps, input.email);
  } catch {
    await finish(claim.lease, { state: 'waiting' }).catch(() => undefined);
    throw new RetryLater('The database is unavailable.', 'database');
  }
  if (slot > now) {
    // Given back, so the mailbox is not held "in progress" while it waits for its slot's hour.
    await finish(claim.lease, { state: 'waiting', slot }).catch(() => undefined);
    deps.logger.info('thank_you.skipped', { ...log, reason: 'mail_budget' });
    return { status: 'waiting', hour: slot };
  }
  // Read again last before the relay: an unsubscribe during the claim and the booking wins.
  const left = await suppression(deps, input.email).catch(async (error: unknown) => {
    await finish(claim.lease, { state: 'waiting', slot }).catch(() => undefined);
    throw error;
  });
  if (left) {
    await finish(claim.lease, { state: 'waiting', slot }).catch(() => undefined);
    deps.logger.info('thank_you.skipped', { ...log, reason: 'suppressed' });
    return { status: 'suppressed' };
  }

  const message = buildThankYouMessage({
    to: input.emailAsSent,
    from: deps.from,
    subscriptionType,
    // A +tag spelling's mail and the bare one's are two messages, each with a Message-ID of its own that a
    // resend keeps, whichever went first and whatever a lost reply made of the record meanwhile.
    recipientHash: thankYouMessageToken(hasPlusTag(input.email) ? `${id}${TAGGED_SUFFIX}` : id),
    unsubscribeUrl: (deps.unsubscribeLink as (email: string) => string)(input.emailAsSent),
  });
  let sent: SentMail;
  try {
    const transport = await deps.transport();
    sent = await transport.send(message);
    if (sent.accepted.length === 0)
      throw Object.assign(new Error('recipient refused'), { code: 'EENVELOPE' });
  } catch (error) {
    const code = smtpErrorCode(error);
    const refusal = smtpRefusal(error);
    deps.logger[refusal === 'transient' ? 'warn' : 'error']('thank_you.failed', {
      ...log,
      attempts: claim.attempts,
      error: code,
      retry: refusal !== 'recipient',
      ...(refusal === 'setup' ? { reason: 'configuration' } : {}),
    });
    // Nothing sent: claimable again (best effort: the lease expires anyway); the slot stays the mailbox's.
    await finish(claim.lease, {
      state: 'failed',
      failed_at: new Date(deps.clock.now()),
      last_error: code,
      slot,
    }).catch(() => undefined);
    if (refusal === 'recipient') return { status: 'failed' };
    throw new RetryLater(
      refusal === 'setup' ? 'The mail relay refused our setup.' : 'The mail relay is unavailable.',
      `smtp ${code}`,
      refusal === 'setup' ? 'configuration' : undefined,
    );
  }
  // The relay accepted the mail: from here a failure is the database's, and never a reason to send again.
  await saveSent(claim.lease, claim.attempt, { sentAt: deps.clock.now(), messageId: sent.messageId }, deps);
  deps.logger.info('thank_you.sent', { ...log, attempts: claim.attempts });
  return { status: 'sent' };
}

function bookSlot(deps: DeliverThankYouDeps, email: string): Promise<number> {
  return bookMailSlot(deps.db, {
    now: deps.clock.now(),
    perHour: deps.mailPerHour,
    domain: deps.mailboxes.domainKey(email),
    logger: deps.logger,
    random: deps.random,
  });
}

async function suppression(deps: DeliverThankYouDeps, email: string): Promise<boolean> {
  return (await withDatabase(() => deps.mailboxes.suppression.among([email]))).size > 0;
}

/**
 * The waits between tries of saving `sent`, within the call's minute. A write whose answer was lost is found
 * saved by the next try (LeaseLostError, which `finish` takes as done).
 */
export const SAVE_SENT_RETRY_MS: readonly number[] = [250, 1_000, 3_000, 8_000];

/**
 * Saves `sent`, retried. Should it still fail, the record stays `sending` (not `failed`, which a retry would
 * send again at once) and UnsavedSend hands the claim's id to the next round (settleUnsaved).
 */
async function saveSent(
  lease: Lease,
  claimId: string,
  sent: { sentAt: number; messageId: string },
  deps: DeliverThankYouDeps,
): Promise<void> {
  const waits = deps.saveRetryMs ?? SAVE_SENT_RETRY_MS;
  for (let attempt = 0; ; attempt += 1) {
    try {
      await finish(lease, {
        state: 'sent',
        sent_at: new Date(sent.sentAt),
        message_id: sent.messageId,
        slot: null,
      });
      return;
    } catch {
      const wait = waits[attempt];
      if (wait === undefined) throw new UnsavedSend(claimId);
      await deps.clock.sleep(wait);
    }
  }
}

class UnsavedSend extends RetryLater {
  constructor(readonly attempt: string) {
    super('The database did not save a mail the relay accepted.', 'database');
  }
}

/** Saves `sent` for the claim `attempt` whose mail went out, unless the record was claimed since. */
async function settleUnsaved(record: DocumentReference, attempt: string, now: number): Promise<void> {
  await record.firestore.runTransaction(async (transaction) => {
    const current = (await transaction.get(record)).data() as Partial<ThankYouRecord> | undefined;
    if (current?.state !== 'sending' || current.attempt_id !== attempt) return;
    transaction.update(record, { state: 'sent', sent_at: new Date(now), lease_expires_at: null, slot: null });
  });
}

/**
 * Whose an SMTP failure is: `recipient`, a 5xx at RCPT about the person's own mailbox (ends the part);
 * `setup`, any other 5xx (our sender, a policy, our message, no enhanced status), our login or TLS, or an
 * unreadable SMTP_URL; `transient`, a 4xx or no answer. Only `recipient` is not retried.
 */
export type SmtpRefusal = 'recipient' | 'setup' | 'transient';

/** RFC 3463's statuses about the person's own mailbox; 5.1.0, 5.1.7, 5.1.8 at RCPT are about our sender. */
const RECIPIENT_STATUSES: ReadonlySet<string> = new Set(['5.1.1', '5.1.2', '5.1.3', '5.1.6', '5.2.1']);

export function smtpRefusal(error: unknown): SmtpRefusal {
  const { code, responseCode, command, response } = (error ?? {}) as {
    code?: unknown;
    responseCode?: unknown;
    command?: unknown;
    response?: unknown;
  };
  if (typeof responseCode === 'number' && responseCode >= 400 && responseCode < 500) return 'transient';
  if (typeof responseCode === 'number' && responseCode >= 500) {
    const status = /^\d{3}[ -](\d\.\d{1,3}\.\d{1,3})\b/.exec(
      typeof response === 'string' ? response : '',
    )?.[1];
    return command === 'RCPT TO' && status !== undefined && RECIPIENT_STATUSES.has(status)
      ? 'recipient'
      : 'setup';
  }
  if (code === 'EAUTH' || code === 'ETLS' || code === 'EREQUIRETLS' || code === 'ESMTPURL') return 'setup';
  return 'transient';
}

type Claim =
  | ThankYouResult
  | {
      status: 'claimed';
      lease: Lease;
      attempts: number;
      attempt: string;
      slot: number | null;
    };

/** What the Message-ID's token of a +tag spelling's mail is made from, after the mailbox key. */
const TAGGED_SUFFIX = '.tagged';

const THANK_YOU_LEASE: LeaseLayout = {
  expiresAt: (data) => {
    const record = data as Partial<ThankYouRecord>;
    return record.state === 'sending' && record.lease_expires_at ? millisOf(record.lease_expires_at) : null;
  },
  fields: (owner, expiresAt) => ({ attempt_id: owner, lease_expires_at: expiresAt }),
};

/**
 * Claims the record (lease.ts): a `sent` one never again but once by the bare spelling after a tagged one, a
 * `sending` one once its lease expired, and never by a tagged spelling once a tagged one was thanked.
 */
async function claimRecord(
  deps: DeliverThankYouDeps,
  ref: DocumentReference,
  email: string,
  subscriptionType: SubscriptionType,
  signup: string,
): Promise<Claim> {
  let claim: LeaseClaim<ThankYouResult>;
  const owner = crypto.randomUUID();
  const spelling: ThankedSpelling = hasPlusTag(email) ? 'tagged' : 'bare';
  try {
    claim = await claimLease<ThankYouResult>(
      ref,
      {
        owner,
        clock: deps.clock,
        leaseMs: deps.leaseMs ?? THANK_YOU_LEASE_MS,
        layout: THANK_YOU_LEASE,
      },
      (previous, now) => {
        const record = previous as Partial<ThankYouRecord> | undefined;
        const sent = record?.state === 'sent';
        if (sent && (record.signup === signup || record.tagged_signup === signup)) {
          return { refuse: { status: 'already_sent', byThisRow: true } };
        }
        const thanked = sent ? record.spelling : null;
        // The bare spelling is thanked once whatever came before; a tagged one only if none was.
        if (thanked === 'bare' || (thanked === 'tagged' && spelling === 'tagged')) {
          return { refuse: { status: 'already_sent', byThisRow: false } };
        }
        const taggedThanked = thanked === 'tagged' || record?.tagged_thanked === true;
        if (spelling === 'tagged' && taggedThanked) {
          return { refuse: { status: 'already_sent', byThisRow: false } };
        }
        return {
          write: {
            state: 'sending',
            subscription_type: subscriptionType,
            signup,
            spelling,
            ...(taggedThanked ? { tagged_thanked: true } : {}),
            ...(thanked === 'tagged' ? { tagged_signup: record?.signup } : {}),
            claimed_at: new Date(now),
            attempts: (record?.attempts ?? 0) + 1,
          },
        };
      },
    );
  } catch {
    throw new RetryLater('The database is unavailable.');
  }
  if (claim.status === 'held') return { status: 'in_progress' };
  if (claim.status === 'refused') return claim.reason;
  const previous = claim.previous as Partial<ThankYouRecord> | undefined;
  return {
    status: 'claimed',
    lease: claim.lease,
    attempts: (previous?.attempts ?? 0) + 1,
    attempt: owner,
    // A slot whose send may have left (a failed or crashed one) is that spelling's message's: another spelling's
    // mail, a message of its own, books its own.
    slot:
      typeof previous?.slot === 'number' && (previous.state === 'waiting' || previous.spelling === spelling)
        ? previous.slot
        : null,
  };
}

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

/** At most 20 mails a second, so a rush is no burst at the relay; MAIL_TASKS_PER_SECOND overrides it. */
export const THANK_YOU_PER_SECOND = positiveNumber(process.env.MAIL_TASKS_PER_SECOND, 20);

export const deliverThankYou = onTaskDispatched(
  {
    secrets: [SMTP_URL, UNSUBSCRIBE_SECRET, MAILBOX_KEY_SECRET],
    timeoutSeconds: THANK_YOU_TIMEOUT_SECONDS,
    retryConfig: RETRY,
    rateLimits: { maxDispatchesPerSecond: THANK_YOU_PER_SECOND, maxConcurrentDispatches: 10 },
  },
  async (request) => {
    const from = MAIL_FROM.value();
    const unsubscribeUrl = UNSUBSCRIBE_URL.value();
    const db = await adminFirestore();
    const mailboxes = mailboxesFromParams(db);
    await handleDeliverThankYou(request.data, {
      enqueuePart: enqueuePart(cloudTasksEnqueue, MAILBOX_KEY_SECRET.value()),
      db,
      transport: () => smtpTransport(SMTP_URL.value()),
      from,
      unsubscribeLink: unsubscribeUrl ? (email) => mailboxes.unsubscribeLink(unsubscribeUrl, email) : null,
      clock: systemClock,
      logger: cloudLogger,
      mailboxes,
      mailPerHour: intParam(MAIL_PER_HOUR, DEFAULTS.MAIL_PER_HOUR),
    });
  },
);
