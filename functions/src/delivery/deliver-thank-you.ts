import '../global-options';
import type { DocumentReference, DocumentSnapshot, Firestore, Timestamp } from 'firebase-admin/firestore';
import { onTaskDispatched } from 'firebase-functions/v2/tasks';
import { type Clock, systemClock } from '../clock';
import { type SubscriptionType, THANK_YOU_MAILS } from '../contract';
import { adminFirestore, millisOf } from '../firestore';
import { claimLease, type Lease, type LeaseLayout, LeaseLostError } from '../lease';
import { cloudLogger, type Logger } from '../logs';
import { bookMailSlot, budgetHour, hourStart, sendHour } from '../mail/budget';
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
import {
  type EnqueuePart,
  enqueuePart,
  type Outcome,
  rowOfTasks,
  runTask,
  storedAddress,
  type Unopened,
} from './part-life';
import { cloudTasksEnqueue, positiveNumber, RETRY, RetryLater, withDatabase } from './queue';

export const THANK_YOU_TIMEOUT_SECONDS = 60;

/**
 * Outlives the function's timeout, so an expired claim's sender is certainly gone. A crash between the relay
 * accepting and the record saying "sent" is the one way to a second mail; it carries the same Message-ID.
 */
export const THANK_YOU_LEASE_MS = 5 * 60_000;

export interface ThankYouRecord {
  /**
   * Given back: `waiting`, before any send on its slot (`slot`), which the next claim of either spelling keeps;
   * `failed`, after a send on it that may have left (a reply lost after DATA), so only that spelling's keeps it.
   */
  state: 'sending' | 'sent' | 'failed' | 'waiting';
  attempts: number;
  attempt_id: string;
  subscription_type: SubscriptionType;
  signup?: string;
  /**
   * The spelling claimed (thanked, once `sent`): `tagged` has a `+tag`, which a stranger can make of any
   * mailbox; one thanked only tagged is thanked once more, bare.
   */
  spelling: 'tagged' | 'bare';
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
export type ThankYouOutcome = Outcome | Unopened;

/**
 * The stored spelling and its mailbox, worked out once per task: its key, its thank-you record, its domain's
 * budget key, its spelling.
 */
function mailboxOf(row: DocumentSnapshot, { db, mailboxes }: Pick<DeliverThankYouDeps, 'db' | 'mailboxes'>) {
  const input = storedAddress(row);
  const key = mailboxes.key(input.email);
  const spelling: 'tagged' | 'bare' = hasPlusTag(input.email) ? 'tagged' : 'bare';
  const record = db.collection(THANK_YOU_MAILS).doc(key);
  return { ...input, key, record, domain: mailboxes.domainKey(input.email), spelling };
}
type Mailbox = ReturnType<typeof mailboxOf>;

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
  mailboxes: Mailboxes;
  mailPerHour: number;
  enqueuePart: EnqueuePart;
  /** The waits between tries of saving `sent` (SAVE_SENT_RETRY_MS). */
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
  return runTask(
    task,
    'thank_you',
    deps,
    (row) => mailboxOf(row, deps),
    (row, round, mailbox) => sendOnce(row, round, mailbox, deps),
    async (input, mailbox) => {
      // A mail the relay accepted, whose save a database failure stopped: saved now, never sent again.
      const { sent } = input;
      if (!sent) return;
      await withDatabase(() => settleUnsaved(mailbox.record, sent, deps.clock.now()));
    },
  );
}

async function sendOnce(
  row: DocumentSnapshot,
  round: number,
  mailbox: Mailbox,
  deps: DeliverThankYouDeps,
): Promise<Outcome> {
  const missing = !deps.from ? 'MAIL_FROM' : !deps.unsubscribeLink ? 'UNSUBSCRIBE_URL' : null;
  if (missing) {
    deps.logger.error('thank_you.not_configured', { missing });
    throw new RetryLater('A setting of the thank-you is missing.', `setting ${missing}`, 'configuration');
  }
  const log = emailFields(mailbox.email);
  const skipped = (reason: string) => deps.logger.info('thank_you.skipped', { ...log, reason });
  if (await suppression(deps, mailbox.email)) {
    skipped('suppressed');
    return 'suppressed';
  }
  const claim = await claimRecord(deps, mailbox, row.id);
  if (typeof claim === 'string') {
    skipped(claim);
    // Another task holds the claim: it sends, or its lease runs out and this one does, later.
    if (claim === 'in_progress')
      throw new RetryLater('Another task is sending this thank-you.', 'in_progress');
    return claim;
  }
  /** Gives the claim back (best effort: the lease expires anyway). */
  const giveBack = (fields: Partial<ThankYouRecord>) => finish(claim.lease, fields).catch(() => undefined);
  /** Given back before a send: `failed` still for a slot a send of this spelling was tried on (ThankYouRecord). */
  const unsentFields = (slot: number | null): Partial<ThankYouRecord> => ({
    state: claim.slotTried && slot === claim.slot ? 'failed' : 'waiting',
    ...(slot === null ? {} : { slot }),
  });
  const unsent = (slot: number | null) => giveBack(unsentFields(slot));
  // Asked only by the claim's holder: a task that finds the mailbox thanked or in progress spends none. A send
  // now counts in this hour, or in none in an hour's last moments (sendHour): then the next is the first.
  const at = deps.clock.now();
  const sendsIn = sendHour(at);
  const first = sendsIn ?? budgetHour(at) + 1;
  let slot = claim.slot !== null && claim.slot >= first ? claim.slot : null;
  let left: boolean;
  try {
    slot ??= await bookMailSlot(deps.db, {
      now: hourStart(first),
      perHour: deps.mailPerHour,
      domain: mailbox.domain,
      logger: deps.logger,
    });
    // Read again last before the relay: an unsubscribe during the claim and the booking wins.
    left = slot === sendsIn && (await suppression(deps, mailbox.email));
  } catch {
    await unsent(slot);
    throw new RetryLater('The database is unavailable.', 'database');
  }
  if (left) {
    await unsent(slot);
    skipped('suppressed');
    return 'suppressed';
  }
  if (slot !== sendsIn) {
    // Given back, so the mailbox is not held "in progress" while it waits for its slot's hour, and kept on the
    // record before the round that spends it is enqueued: a round waiting for an hour waits for a slot the
    // mailbox holds. Should the record not take it, this round is retried and books again.
    await withDatabase(() => finish(claim.lease, unsentFields(slot)));
    skipped('mail_budget');
    await withDatabase(() => deps.enqueuePart('thank_you', rowOfTasks(row), round + 1, hourStart(slot)));
    return { waiting: slot };
  }

  const message = buildThankYouMessage({
    to: mailbox.emailAsSent,
    from: deps.from,
    subscriptionType: mailbox.subscriptionType,
    // A +tag spelling's mail and the bare one's are two messages, each with a Message-ID of its own that a
    // resend keeps, whichever went first and whatever a lost reply made of the record meanwhile.
    recipientHash: thankYouMessageToken(
      mailbox.spelling === 'tagged' ? `${mailbox.key}${TAGGED_SUFFIX}` : mailbox.key,
    ),
    unsubscribeUrl: (deps.unsubscribeLink as (email: string) => string)(mailbox.emailAsSent),
  });
  if (sendHour(deps.clock.now()) !== slot) {
    // The booking and the reads took the rest of the slot's hour: sent now, it would count in the next. The
    // next try books again (the slot is past).
    await unsent(slot);
    throw new RetryLater('The mail budget hour of the slot ended before the send.', 'budget_hour_ended');
  }
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
    // Claimable again; the slot stays this spelling's, whose mail may have left (a reply lost after DATA).
    await giveBack({ state: 'failed', failed_at: new Date(deps.clock.now()), last_error: code, slot });
    if (refusal === 'recipient') return 'refused';
    const setup = refusal === 'setup';
    const why = setup ? 'The mail relay refused our setup.' : 'The mail relay is unavailable.';
    throw new RetryLater(why, `smtp ${code}`, setup ? 'configuration' : undefined);
  }
  // The relay accepted the mail: from here a failure is the database's, and never a reason to send again.
  if (!(await saveSent(claim.lease, sent.messageId, deps))) {
    // The record stays `sending` (not `failed`, which a retry would send again at once): Cloud Tasks keeps
    // what the database could not, the claim's id in the next round (settleUnsaved); this task is acknowledged,
    // so no retry of it claims again.
    const handed = await deps
      .enqueuePart('thank_you', rowOfTasks(row), round + 1, undefined, { sent: claim.attempt })
      .catch(() => null);
    if (handed !== 'enqueued') throw new RetryLater('The database did not save a sent mail.', 'database');
    deps.logger.warn('thank_you.sent_unsaved', { ...log, round: round + 1 });
    return 'sent_unsaved';
  }
  deps.logger.info('thank_you.sent', { ...log, attempts: claim.attempts });
  return 'delivered';
}

async function suppression(deps: DeliverThankYouDeps, email: string): Promise<boolean> {
  return (await withDatabase(() => deps.mailboxes.suppression.among([email]))).size > 0;
}

/**
 * The waits between tries of saving `sent`, within the call's minute. A write whose answer was lost is found
 * saved by the next try (LeaseLostError, which `finish` takes as done).
 */
const SAVE_SENT_RETRY_MS = [250, 1_000, 3_000, 8_000];

/** Saves `sent`, retried; false when every try failed. */
async function saveSent(lease: Lease, messageId: string, deps: DeliverThankYouDeps): Promise<boolean> {
  const sentAt = new Date(deps.clock.now());
  for (const wait of [...(deps.saveRetryMs ?? SAVE_SENT_RETRY_MS), null]) {
    try {
      await finish(lease, { state: 'sent', sent_at: sentAt, message_id: messageId, slot: null });
      return true;
    } catch {
      if (wait === null) return false;
      await deps.clock.sleep(wait);
    }
  }
  return false;
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
  const { code, responseCode, command, response } = (error ?? {}) as Record<string, unknown>;
  if (typeof responseCode === 'number' && responseCode >= 400) {
    if (responseCode < 500) return 'transient';
    const status = /^\d{3}[ -](\d\.\d{1,3}\.\d{1,3})\b/.exec(String(response))?.[1] ?? '';
    return command === 'RCPT TO' && RECIPIENT_STATUSES.has(status) ? 'recipient' : 'setup';
  }
  return ['EAUTH', 'ETLS', 'EREQUIRETLS', 'ESMTPURL'].includes(String(code)) ? 'setup' : 'transient';
}

type Refusal = 'already_delivered' | 'already_thanked' | 'in_progress';
type Claim =
  | Refusal
  | { lease: Lease; attempts: number; attempt: string; slot: number | null; slotTried: boolean };

/** What the Message-ID's token of a +tag spelling's mail is made from, after the mailbox key. */
const TAGGED_SUFFIX = '.tagged';

const THANK_YOU_LEASE: LeaseLayout = {
  expiresAt: ({ state, lease_expires_at: expires }: Partial<ThankYouRecord>) =>
    state === 'sending' && expires ? millisOf(expires) : null,
  fields: (owner, expiresAt) => ({ attempt_id: owner, lease_expires_at: expiresAt }),
};

/**
 * Claims the record (lease.ts): a `sent` one never again but once by the bare spelling after a tagged one, a
 * `sending` one once its lease expired, and never by a tagged spelling once a tagged one was thanked.
 */
async function claimRecord(
  deps: DeliverThankYouDeps,
  { record: ref, spelling, subscriptionType }: Mailbox,
  signup: string,
): Promise<Claim> {
  const owner = crypto.randomUUID();
  const claim = await withDatabase(() =>
    claimLease<Refusal>(
      ref,
      {
        owner,
        clock: deps.clock,
        leaseMs: THANK_YOU_LEASE_MS,
        layout: THANK_YOU_LEASE,
      },
      (previous, now) => {
        const record = previous as Partial<ThankYouRecord> | undefined;
        const sent = record?.state === 'sent';
        // This row's own mail went out: as the record's sent claim, or as the tagged mail a bare claim kept,
        // whatever that claim has come to since (waiting for its slot, failed).
        if ((sent && record.signup === signup) || record?.tagged_signup === signup) {
          return { refuse: 'already_delivered' };
        }
        const thanked = sent ? record.spelling : null;
        const taggedThanked = thanked === 'tagged' || record?.tagged_thanked === true;
        // The bare spelling is thanked once whatever came before; a tagged one only if none was.
        if (thanked === 'bare' || (spelling === 'tagged' && taggedThanked)) {
          return { refuse: 'already_thanked' };
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
    ),
  );
  if (claim.status === 'held') return 'in_progress';
  if (claim.status === 'refused') return claim.reason;
  const previous = claim.previous as Partial<ThankYouRecord> | undefined;
  // A slot whose send may have left (a failed or crashed one) is that spelling's message's: another spelling's
  // mail, a message of its own, books its own.
  const untried = previous?.state === 'waiting';
  const kept = typeof previous?.slot === 'number' && (untried || previous.spelling === spelling);
  return {
    lease: claim.lease,
    attempts: (previous?.attempts ?? 0) + 1,
    attempt: owner,
    slot: kept ? (previous.slot as number) : null,
    slotTried: kept && !untried,
  };
}

/** Releases the claim with `fields`; a lease found lost was released by an earlier try whose answer was lost. */
async function finish(lease: Lease, fields: Partial<ThankYouRecord>): Promise<void> {
  await lease.release(fields).catch((error: unknown) => {
    if (!(error instanceof LeaseLostError)) throw error;
  });
}

/** A code for the record and the logs: nodemailer's error code and the SMTP reply code, never the text. */
function smtpErrorCode(error: unknown): string {
  const { code, responseCode } = (error ?? {}) as Record<string, unknown>;
  const name = typeof code === 'string' ? code : 'ERROR';
  return typeof responseCode === 'number' ? `${name} ${responseCode}` : name;
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
    const unsubscribeUrl = UNSUBSCRIBE_URL.value();
    const db = await adminFirestore();
    const mailboxes = mailboxesFromParams(db);
    await handleDeliverThankYou(request.data, {
      enqueuePart: enqueuePart(cloudTasksEnqueue, MAILBOX_KEY_SECRET.value()),
      db,
      transport: () => smtpTransport(SMTP_URL.value()),
      from: MAIL_FROM.value(),
      unsubscribeLink: unsubscribeUrl ? (email) => mailboxes.unsubscribeLink(unsubscribeUrl, email) : null,
      clock: systemClock,
      logger: cloudLogger,
      mailboxes,
      mailPerHour: intParam(MAIL_PER_HOUR, DEFAULTS.MAIL_PER_HOUR),
    });
  },
);
