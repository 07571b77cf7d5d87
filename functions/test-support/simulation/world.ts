// The world around the delivery engine in a simulation: Cloud Tasks, the SMTP relay and MailerLite as doubles
// that keep what they were given and fail as the scenario's outages say, at the handlers' own interfaces
// (delivery/queue.ts's Enqueue, mail/transport.ts's MailTransport, the MailerLite client's three calls they make).
// Each double asks the run (WorldRun) for the clock, the seed's chances and the scheduler's turn.

import {
  type Enqueue,
  ERASURE_QUEUE,
  type QueueName,
  RETRY,
  type RetrySettings,
} from '../../src/delivery/queue';
import { budgetHour } from '../../src/mail/budget';
import type { MailTransport } from '../../src/mail/transport';
import type { MailerLiteClient, UpsertSubscriberInput } from '../../src/mailerlite/client';
import {
  MailerLiteAuthError,
  MailerLiteNotFoundError,
  MailerLiteProtocolError,
  MailerLiteRateLimitError,
  MailerLiteRequestError,
  MailerLiteTimeoutError,
  MailerLiteValidationError,
} from '../../src/mailerlite/errors';
import { FINISH_ERASURE_RETRY } from '../../src/privacy/finish-erasure';
import { HOUR, type MailerLiteOutage, MINUTE, type Outage, type SmtpOutage } from './scenario';

/** mulberry32: the run's own choices, replayable from its seed. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** An invocation died: every outside call it makes from then on fails, and its task is not acknowledged. */
export class Crash extends Error {
  override name = 'Crash';
}

/** What the doubles ask of the run. */
export interface WorldRun {
  now(): number;
  rand(): number;
  /** Before an outside call: waits for the scheduler's turn; throws Crash once the invocation died. */
  outside(): Promise<void>;
  /** An outside call that takes no turn of its own: whether the invocation has died. */
  crashed(): boolean;
  /** The outage of a service now, if one falls on this call (its share rolled). */
  outage(service: Outage['service']): Outage | null;
  /** A chance per call while the scenario's faults fall. */
  fault(chance: number): boolean;
  /** A finding of an invariant checked at the call itself (nothing sent after an erasure). */
  found(invariant: string, message: string): void;
  /** Whether the mailbox (its key) was erased: the unsubscribe page said done. */
  erased(mailbox: string): boolean;
}

export interface SimTask {
  id: string;
  queue: QueueName;
  payload: Record<string, unknown>;
  runAt: number;
  attempts: number;
  firstAttemptAt: number | null;
  /** A delivery of it is in flight. */
  running: boolean;
  seq: number;
}

/** How long Cloud Tasks keeps answering ALREADY_EXISTS for a task id after its task ended. */
export const ID_REMEMBERED_MS = HOUR;

/**
 * Cloud Tasks: a task id answers ALREADY_EXISTS while its task lives and for an hour after it ended, then may
 * be used again; a failed task is retried with the queue's backoff and given up once both its attempts and its
 * retry duration are spent (Cloud Tasks' documented rule); an enqueue may fail before it applied or after.
 */
export class CloudTasks {
  readonly live = new Map<string, SimTask>();
  private readonly ended = new Map<string, number>();
  private seq = 0;
  givenUp = 0;

  constructor(
    private readonly run: WorldRun,
    private readonly lateShare: number,
    private readonly enqueueBefore: number,
    private readonly enqueueAfter: number,
  ) {}

  readonly enqueue: Enqueue = async (queue, payload, { id, notBefore }) => {
    // Not a turn of its own: the trigger enqueues its two parts side by side.
    if (this.run.crashed()) throw new Crash('The invocation died.');
    const down = this.run.outage('tasks') !== null;
    if (down || this.run.fault(this.enqueueBefore))
      throw Object.assign(new Error('UNAVAILABLE'), { code: 14 });
    const endedAt = this.ended.get(id);
    if (this.live.has(id) || (endedAt !== undefined && this.run.now() - endedAt < ID_REMEMBERED_MS))
      return 'duplicate';
    const late = this.run.rand() < this.lateShare ? Math.floor(this.run.rand() * MINUTE) : 0;
    const now = this.run.now();
    this.live.set(id, {
      id,
      queue,
      payload: payload as unknown as Record<string, unknown>,
      runAt: Math.max(now, notBefore ?? now) + late,
      attempts: 0,
      firstAttemptAt: null,
      running: false,
      seq: this.seq++,
    });
    if (this.run.fault(this.enqueueAfter)) throw Object.assign(new Error('DEADLINE_EXCEEDED'), { code: 4 });
    return 'enqueued';
  };

  ready(now: number): SimTask[] {
    return [...this.live.values()].filter((task) => !task.running && task.runAt <= now);
  }

  nextAt(): number {
    return Math.min(...[...this.live.values()].filter((task) => !task.running).map((task) => task.runAt));
  }

  started(task: SimTask): void {
    task.running = true;
    task.firstAttemptAt ??= this.run.now();
  }

  /** Acknowledged, or retried with the queue's backoff, or given up after its last attempt. */
  finished(task: SimTask, ok: boolean): void {
    task.running = false;
    const now = this.run.now();
    if (!ok) {
      task.attempts += 1;
      const retry: RetrySettings = task.queue === ERASURE_QUEUE ? FINISH_ERASURE_RETRY : RETRY;
      const spent =
        task.attempts >= retry.maxAttempts &&
        now - (task.firstAttemptAt ?? now) >= retry.maxRetrySeconds * 1000;
      if (!spent) {
        const doublings = Math.min(task.attempts - 1, retry.maxDoublings);
        const linear = Math.max(0, task.attempts - 1 - retry.maxDoublings) * 2 ** retry.maxDoublings;
        const backoff = Math.min(
          retry.maxBackoffSeconds,
          (2 ** doublings + linear) * retry.minBackoffSeconds,
        );
        task.runAt = now + backoff * 1000;
        return;
      }
      this.givenUp += 1;
    }
    this.live.delete(task.id);
    this.ended.set(task.id, now);
  }

  /** Whether a task of this row's part is alive on its round (a task of an older round does nothing). */
  liveFor(signup: string, queue: QueueName, round: number): boolean {
    for (const task of this.live.values()) {
      if (task.queue !== queue || task.payload.signup !== signup) continue;
      const taskRound = task.payload.round;
      // A task of a later round (its enqueuer died before writing the round) moves the part to it.
      if (taskRound === undefined || (typeof taskRound === 'number' && taskRound >= round)) return true;
    }
    return false;
  }
}

export interface Mail {
  mailbox: string;
  tagged: boolean;
  messageId: string;
  at: number;
}

/** An error as nodemailer throws it: its code, the reply's code and text, and the command that got it. */
function smtpError(code: string, responseCode?: number, command?: string, response?: string): Error {
  return Object.assign(new Error(response ?? code), { code, responseCode, command, response });
}

const SMTP_FAILURES: Record<Exclude<SmtpOutage, 'reply_lost'>, () => Error> = {
  connect: () => smtpError('ECONNECTION'),
  sender_refused: () =>
    smtpError('EENVELOPE', 554, 'MAIL FROM', '554 5.7.1 Message rejected: Email address is not verified'),
  login_refused: () => smtpError('EAUTH', 535, 'AUTH PLAIN', '535 5.7.8 Authentication credentials invalid'),
  rcpt_later: () => smtpError('EENVELOPE', 450, 'RCPT TO', '450 4.2.1 Mailbox busy, try again later'),
  relay_denied: () => smtpError('EENVELOPE', 550, 'RCPT TO', '550 5.7.1 Relaying denied'),
  data_refused: () => smtpError('EMESSAGE', 554, 'DATA', '554 5.6.0 Message refused'),
  data_later: () => smtpError('EMESSAGE', 451, 'DATA', '451 4.3.0 Try again later'),
};

/**
 * The relay: refuses at connect, MAIL FROM, RCPT or DATA as an outage says, refuses the refused person's own
 * mailbox at RCPT (550 5.1.1), and loses its reply after DATA (the mail stored, the worker told nothing). Keeps
 * every mail it accepted, by Message-ID (a copy sent again under one Message-ID is one message).
 */
export function relay(
  run: WorldRun,
  keyOf: (email: string) => string,
  hasPlusTag: (email: string) => boolean,
  refusedMailbox: string | null,
): { transport: MailTransport; mails: Mail[] } {
  const mails: Mail[] = [];
  const transport: MailTransport = {
    async send(message) {
      // Not a turn of its own: nothing but building the message lies between the worker's last look at the
      // suppression list and the relay.
      if (run.crashed()) throw new Crash('The invocation died.');
      const to = String(message.to);
      const mailbox = keyOf(to);
      const outage = run.outage('smtp') as (Outage & { service: 'smtp' }) | null;
      if (outage && outage.kind !== 'reply_lost') throw SMTP_FAILURES[outage.kind]();
      if (mailbox === refusedMailbox)
        throw smtpError('EENVELOPE', 550, 'RCPT TO', '550 5.1.1 Mailbox unavailable');
      const messageId = String(message.messageId);
      if (run.erased(mailbox))
        run.found('erased', `a thank-you sent after the erasure of its mailbox (${messageId})`);
      mails.push({ mailbox, tagged: hasPlusTag(to), messageId, at: run.now() });
      if (outage?.kind === 'reply_lost') throw smtpError('ETIMEDOUT');
      return { messageId, accepted: [to], rejected: [] };
    },
  };
  return { transport, mails };
}

function mailerLiteFailure(kind: MailerLiteOutage): Error | null {
  switch (kind) {
    case '401':
      return new MailerLiteAuthError();
    case '403':
      return new MailerLiteRequestError(403, 'This action is unauthorized.');
    case '404':
      return new MailerLiteNotFoundError('/subscribers');
    case '429':
      return new MailerLiteRateLimitError(60_000);
    case '5xx':
      return new MailerLiteRequestError(503, 'Service Unavailable');
    case 'not_its_shape':
      return new MailerLiteProtocolError('MailerLite answered 200 with a body it does not document.', 200);
    case 'timeout_after':
      return null;
  }
}

/**
 * MailerLite: its subscribers by address as pushed, with their groups. An outage answers each call as its kind
 * says (a 404 only where the real client does not read it as "no such subscriber": the upsert); `timeout_after`
 * applies the change and then does not answer. The refused person's address gets a 422 on the email.
 */
export function mailerLite(
  run: WorldRun,
  keyOf: (email: string) => string,
  refusedMailbox: string | null,
): { client: MailerLiteClient; subscribers: Map<string, Set<string>> } {
  const subscribers = new Map<string, Set<string>>();
  const failing = (call: 'upsert' | 'get' | 'forget') => {
    const outage = run.outage('mailerlite') as (Outage & { service: 'mailerlite' }) | null;
    if (!outage || (outage.kind === '404' && call !== 'upsert')) return { error: null, lost: false };
    const error = mailerLiteFailure(outage.kind);
    return { error, lost: error === null };
  };
  const known = (address: string) =>
    [...subscribers.keys()].filter((email) => email.toLowerCase() === address.toLowerCase());
  const client = {
    async upsertSubscriber(input: UpsertSubscriberInput) {
      await run.outside();
      const { error, lost } = failing('upsert');
      if (error) throw error;
      if (keyOf(input.email) === refusedMailbox) {
        throw new MailerLiteValidationError('The email must be a valid email address.', {
          email: ['The email must be a valid email address.'],
        });
      }
      if (run.erased(keyOf(input.email)))
        run.found('erased', 'a contact pushed to MailerLite after the erasure of its mailbox');
      const groups = subscribers.get(input.email) ?? new Set<string>();
      const created = !subscribers.has(input.email);
      for (const group of input.groups ?? []) groups.add(group);
      subscribers.set(input.email, groups);
      if (lost) throw new MailerLiteTimeoutError(10_000);
      return {
        created,
        subscriber: { id: '1', email: input.email, status: 'active', fields: {}, groups: [] },
      };
    },
    async getSubscriber(address: string) {
      await run.outside();
      const { error, lost } = failing('get');
      if (error) throw error;
      if (lost) throw new MailerLiteTimeoutError(10_000);
      const [email] = known(address);
      if (email === undefined) return null;
      const groups = [...(subscribers.get(email) ?? [])].map((id) => ({ id, name: id }));
      return { id: '1', email, status: 'active', fields: {}, groups };
    },
    async forgetSubscriber(address: string) {
      await run.outside();
      const { error, lost } = failing('forget');
      if (error) throw error;
      const emails = known(address);
      for (const email of emails) subscribers.delete(email);
      if (lost) throw new MailerLiteTimeoutError(10_000);
      return emails.length > 0;
    },
  } as unknown as MailerLiteClient;
  return { client, subscribers };
}

/** The clock hour (the mail budget's window) a time falls in. */
export const hourOf = (at: number) => budgetHour(at);
