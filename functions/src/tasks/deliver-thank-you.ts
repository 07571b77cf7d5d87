import '../global-options';
import type { DocumentReference, Firestore, Timestamp } from 'firebase-admin/firestore';
import { onTaskDispatched } from 'firebase-functions/v2/tasks';
import { type Clock, systemClock } from '../clock';
import { SIGNUPS, SUBSCRIPTION_TYPES, type SubscriptionType, THANK_YOU_MAILS } from '../contract';
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
import {
  cloudTasksEnqueue,
  parseSignupTask,
  parseTask,
  positiveNumber,
  RETRY,
  RetryLater,
  withDatabase,
} from './queue';
import {
  type EnqueuePart,
  enqueuePart,
  isSettled,
  type PartEvent,
  partOf,
  RowDelivery,
  rowOfTasks,
} from './row-delivery';

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

/** Whether a thanked spelling has a `+tag`: a stranger can make one of any mailbox, the bare one is its own. */
export type ThankedSpelling = 'tagged' | 'bare';

/** `waiting`: claimed once, then given back until the hour of its slot of the mail budget (`slot`). */
export type ThankYouState = 'sending' | 'sent' | 'failed' | 'waiting';

/** `thank_you_mails/{mailbox key}` (privacy/mailbox-key.ts). Holds no address. */
export interface ThankYouRecord {
  state: ThankYouState;
  attempts: number;
  attempt_id: string;
  subscription_type: SubscriptionType;
  /** The row (its id: no address) whose task claimed it last: the one thanked, once `sent`. */
  signup?: string;
  /**
   * Whether the spelling claimed (the one thanked, once `sent`) has a `+tag` (privacy/mailbox-key.ts,
   * hasPlusTag). A mailbox thanked only at a tagged spelling is thanked once more, at its bare one.
   */
  spelling: ThankedSpelling;
  /** A tagged spelling of the mailbox was thanked before the bare one's claim: no tagged one is again. */
  tagged_thanked?: boolean;
  /**
   * The hour (mail/budget.ts, budgetHour) of the mail budget's slot booked for the mailbox's next mail and not
   * spent yet; null once a mail went out on it. Honoured in that hour only: any task of the mailbox then sends
   * on it, and a send in a later hour books again.
   */
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
  /** The row is gone (erased, or past retention): nothing is sent for it. */
  | { status: 'gone' }
  /** The row's thank-you was settled by an earlier task. */
  | { status: 'settled' }
  /** A task of a round older than the part's (tasks/part-life.ts): it does nothing. */
  | { status: 'stale' }
  /**
   * The relay accepted the mail and the database did not save it: the next round's task carries the claim's
   * id and saves it once the database answers (never sending again).
   */
  | { status: 'sent_unsaved' }
  /** The mailbox unsubscribed: nothing is sent to it again, whoever signs it up. */
  | { status: 'suppressed' }
  /**
   * Over the mail budget: a slot booked in a later hour (mail/budget.ts), the part's next round enqueued to run
   * then, and this task acknowledged.
   */
  | { status: 'waiting'; hour: number }
  /**
   * The relay refused the recipient for good (5.1.1, 5.1.2, 5.1.3, 5.1.6 or 5.2.1 at RCPT: the person's own
   * mailbox): the part is skipped.
   * Every other refusal (our sender, our login, TLS, the message) is our setup's, thrown as RetryLater.
   */
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
  /** The mailbox's key (which names the record), its suppression entry and its domain's key in the mail budget. */
  mailboxes: Mailboxes;
  /** MAIL_PER_HOUR: the mail budget (mail/budget.ts). */
  mailPerHour: number;
  /** Draws the budget's first shard to try (mail/budget.ts); Math.random unless a test draws from a seed. */
  random?: () => number;
  /** Enqueues the part's next round, for a thank-you whose `sent` the database did not save. */
  enqueuePart: EnqueuePart;
  /** Waits between the tries of saving `sent` once the relay accepted (SAVE_SENT_RETRY_MS). */
  saveRetryMs?: readonly number[];
}

/**
 * One thank-you message per mailbox (privacy/mailbox-key.ts: every spelling of one mailbox is one), ever,
 * only for a stored sign-up, to the spelling stored, and never to a mailbox on the suppression list; but for
 * one more: a mailbox thanked only at a `+tag` spelling (one anyone can make of it, which some providers
 * bounce) is thanked again once its bare spelling, its own, is stored. At most two per mailbox, ever. The task
 * names the row (tasks/queue.ts); the row's trigger enqueued it (triggers/index-signup.ts), or the
 * reconciler did again (scheduled/reconcile-deliveries.ts). A row gone (erased, or past retention) gets
 * nothing. The mailbox's record is claimed (lease.ts) before anything else is spent: a second task
 * (concurrent or later) sees the claim and sends nothing, and only the claim's holder books a slot of the
 * mail budget, kept on the record, so a burst of spellings of one mailbox spends one.
 *
 * A mail leaves only on a slot of the hour it leaves in (mail/budget.ts). Over the budget, the task does not
 * spend its retries waiting: a slot is booked in the first hour with room, the part's next round is enqueued
 * to run at that hour's start, and the task is acknowledged; the part waits (`mail_budget`) with a due time
 * (tasks/part-life.ts). Only the person ends the part (tasks/part-life.ts): the relay refusing their own
 * mailbox (5.1.1, 5.1.2, 5.1.3, 5.1.6 or 5.2.1 at RCPT) skips it, `refused`. Every other failure throws
 * RetryLater and Cloud Tasks tries again (backoff at most 10 minutes): the relay down or
 * answering 4xx, the database, another task's claim still held, counted on the row with the code; and our
 * setup (the relay refusing our sender, login, TLS or message; MAIL_FROM or UNSUBSCRIBE_URL unset), which the
 * row shows waiting, `configuration`, with the code, until an operator has fixed it.
 */
export async function handleDeliverThankYou(
  task: unknown,
  deps: DeliverThankYouDeps,
): Promise<ThankYouOutcome> {
  const input = parseTask(task, parseSignupTask, deps.logger, 'thank_you.task_malformed');
  if (!input) return { status: 'failed' };
  const row = await withDatabase(() => deps.db.collection(SIGNUPS).doc(input.signup).get());
  if (!row.exists) {
    deps.logger.info('thank_you.signup_gone', {});
    return { status: 'gone' };
  }
  if (input.sent) {
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
  }
  const part = partOf(row.data(), 'thank_you');
  if (isSettled(part)) return { status: 'settled' };
  // A task of a past round does nothing: the round the part is on has its own task.
  if (part && input.round < part.round) return { status: 'stale' };
  const round = input.round;
  const delivery = new RowDelivery(row.ref, 'thank_you');
  const apply = (event: PartEvent) => withDatabase(() => delivery.apply(event, deps.clock.now()));
  let stored: ThankYouInput;
  try {
    stored = parseThankYouInput({ email: row.get('email') });
  } catch {
    await apply({ kind: 'skipped', round, reason: 'not_an_address' });
    return { status: 'failed' };
  }
  const type = row.get('subscription_type');
  const subscriptionType = (SUBSCRIPTION_TYPES as readonly unknown[]).includes(type)
    ? (type as SubscriptionType)
    : 'updates';
  try {
    const missing = !deps.from ? 'MAIL_FROM' : !deps.unsubscribeLink ? 'UNSUBSCRIBE_URL' : null;
    if (missing) {
      // Our setup, which an operator fixes: the part waits, saying so, and Cloud Tasks tries again.
      deps.logger.error('thank_you.not_configured', { missing });
      throw new RetryLater('A setting of the thank-you is missing.', `setting ${missing}`, 'configuration');
    }
    const outcome = await sendOnce(stored, subscriptionType, row.id, deps);
    if (outcome.status === 'waiting') {
      // The next round runs in the slot's hour; the part moves to it, due long after (its net).
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
      // Cloud Tasks keeps what the database could not: the next round's task carries the claim's id and
      // saves `sent` once the database answers, then settles the part done. This task is acknowledged, so
      // none of its retries claims the mailbox again.
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
  // The list looked at again, last before the relay: a person who unsubscribed while this task claimed the
  // record and took its slot gets nothing. Nothing but building the message lies between this read and the
  // send; a click whose first write comes after this read found a mail already on its way.
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
    // The spelling stored, as the person typed it (trimmed).
    to: input.emailAsSent,
    from: deps.from,
    subscriptionType,
    // The bare spelling's mail after a tagged one is another message, with a Message-ID of its own.
    recipientHash: thankYouMessageToken(claim.afterTagged ? `${id}${OWN_ADDRESS_SUFFIX}` : id),
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
    // Nothing was sent: the record is claimable again. Best effort: if even this write fails, the lease
    // expires and a later task claims it anyway.
    // The slot stays the mailbox's: a retry within its hour sends on it.
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

/** A slot of the mail budget, in the first hour from now with room (mail/budget.ts). */
function bookSlot(deps: DeliverThankYouDeps, email: string): Promise<number> {
  return bookMailSlot(deps.db, {
    now: deps.clock.now(),
    perHour: deps.mailPerHour,
    domain: deps.mailboxes.domainKey(email),
    logger: deps.logger,
    random: deps.random,
  });
}

/** Whether the mailbox is on the suppression list (the person unsubscribed). */
async function suppression(deps: DeliverThankYouDeps, email: string): Promise<boolean> {
  return (await withDatabase(() => deps.mailboxes.suppression.among([email]))).size > 0;
}

/**
 * How long to wait before each try of saving `sent` after the relay accepted the mail: the database must
 * answer within the call (a minute, THANK_YOU_TIMEOUT_SECONDS, the SMTP exchange included). A write whose
 * answer was lost after it applied is found saved by the next try (the lease's update time has moved:
 * LeaseLostError, which `finish` takes as done).
 */
export const SAVE_SENT_RETRY_MS: readonly number[] = [250, 1_000, 3_000, 8_000];

/**
 * Saves `sent`, tried again while the database fails. Should it still fail, the record stays `sending` under
 * this call's claim (never `failed`, which a retry would claim and send again at once), and UnsavedSend says
 * so: the handler hands the claim's id to a task of the part's next round, which saves `sent` once the
 * database answers (settleUnsaved).
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

/** The relay accepted the mail and the database did not save it: `attempt` is the claim that sent it. */
class UnsavedSend extends RetryLater {
  constructor(readonly attempt: string) {
    super('The database did not save a mail the relay accepted.', 'database');
  }
}

/**
 * A task carrying a claim's id (`sent`): the mail that claim sent went out, and its record still names the
 * claim, `sending`. It is saved `sent` now; a record claimed since by another call (its lease ran out first)
 * is that call's, and left alone.
 */
async function settleUnsaved(record: DocumentReference, attempt: string, now: number): Promise<void> {
  await record.firestore.runTransaction(async (transaction) => {
    const current = (await transaction.get(record)).data() as Partial<ThankYouRecord> | undefined;
    if (current?.state !== 'sending' || current.attempt_id !== attempt) return;
    transaction.update(record, { state: 'sent', sent_at: new Date(now), lease_expires_at: null, slot: null });
  });
}

/**
 * Whose an SMTP failure is, by its stage and code:
 * - `recipient`: the relay refused that recipient for good, a 5xx at RCPT whose enhanced status (RFC 3463)
 *   is about the recipient's own mailbox (RECIPIENT_STATUSES): the person's, which ends the part;
 * - `setup`: the relay refused us (a 5xx anywhere else: our sender at MAIL FROM, as a provider does before
 *   the domain is verified, 554 5.7.1; a login it requires, 530 5.7.0; our message at DATA; a 5xx at RCPT
 *   about our sender or a policy, 5.1.0, 5.1.7, 5.1.8 or 5.7.x, or with no enhanced status), or our login
 *   or TLS failed (EAUTH, ETLS), or SMTP_URL cannot be read (ESMTPURL, mail/transport.ts): our setup,
 *   retried until an operator fixes it;
 * - `transient`: a 4xx (RFC 5321: try again later), or no answer at all (the relay unreachable, a dropped
 *   connection, a timeout): retried.
 */
export type SmtpRefusal = 'recipient' | 'setup' | 'transient';

/**
 * The enhanced statuses about the recipient's own mailbox (RFC 3463): bad mailbox (5.1.1), bad domain
 * (5.1.2), bad address syntax (5.1.3), mailbox moved (5.1.6), mailbox disabled (5.2.1). 5.1.0, 5.1.7 and
 * 5.1.8 are about an address too, but a relay gives them at RCPT about our sender.
 */
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
      afterTagged: boolean;
      /** The hour of the mailbox's slot not spent yet (ThankYouRecord's `slot`), or null. */
      slot: number | null;
    };

/** What the Message-ID's token of the bare spelling's mail after a tagged one is made from, after the key. */
const OWN_ADDRESS_SUFFIX = '.own-address';

/** The record's lease: `attempt_id` names the call that holds it, `lease_expires_at` until when. */
const THANK_YOU_LEASE: LeaseLayout = {
  expiresAt: (data) => {
    const record = data as Partial<ThankYouRecord>;
    return record.state === 'sending' && record.lease_expires_at ? millisOf(record.lease_expires_at) : null;
  },
  fields: (owner, expiresAt) => ({ attempt_id: owner, lease_expires_at: expiresAt }),
};

/**
 * Claims the record for this call (see ../lease.ts): a `sent` record is never claimed again, but once by
 * the bare spelling of a mailbox thanked only at a tagged one; a `sending` one only once its lease has
 * expired (its sender died), a `failed` one at once; and never by a tagged spelling once a tagged one was
 * thanked. Of two calls at the same moment only one can claim it; the other reads again and sees the claim.
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
        if (sent && record.signup === signup) {
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
  const afterTagged =
    spelling === 'bare' &&
    (previous?.tagged_thanked === true || (previous?.state === 'sent' && previous.spelling === 'tagged'));
  return {
    status: 'claimed',
    lease: claim.lease,
    attempts: (previous?.attempts ?? 0) + 1,
    attempt: owner,
    afterTagged,
    slot: typeof previous?.slot === 'number' ? previous.slot : null,
  };
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

/**
 * The thank-you queue sends at most 20 mails a second (a burst of sign-ups does not become a burst at the
 * relay, which providers throttle and rate a sender by), and at most MAIL_PER_HOUR an hour (the budget,
 * mail/budget.ts), retried for two days. MAIL_TASKS_PER_SECOND overrides the rate, read when the functions
 * load (functions/.env.<project>), as MAILERLITE_TASKS_PER_MINUTE is.
 */
export const THANK_YOU_PER_SECOND = positiveNumber(process.env.MAIL_TASKS_PER_SECOND, 20);

export const deliverThankYou = onTaskDispatched(
  {
    secrets: [SMTP_URL, UNSUBSCRIBE_SECRET, MAILBOX_KEY_SECRET],
    timeoutSeconds: THANK_YOU_TIMEOUT_SECONDS,
    retryConfig: RETRY,
    rateLimits: { maxDispatchesPerSecond: THANK_YOU_PER_SECOND, maxConcurrentDispatches: 10 },
  },
  async (request) => {
    // A missing setting is our setup's: the handler says so on the row and the task is retried until it is set.
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
