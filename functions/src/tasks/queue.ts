import { createHmac } from 'node:crypto';
import type { SubscriptionType } from '../contract';
import { derivedKey } from '../derived-key';
import type { LogEvent, Logger } from '../logs';

/**
 * The delivery of a sign-up, handed to Cloud Tasks: every stored row enqueues its contact and its
 * thank-you (triggers/index-signup.ts), and the two sign-up callables may enqueue the same work sooner (they
 * validate, enqueue one task and answer); a task-queue function (deliver-contact.ts, deliver-thank-you.ts) does the work, and Cloud
 * Tasks retries it with backoff, paces it (`rateLimits`) and drops a task whose id it has seen.
 *
 * Queue names are the worker functions' names (Firebase names a task-queue function's queue after it);
 * the exports in index.ts nest them so Firebase joins the groups with dashes.
 */
export const QUEUES = {
  contact: 'deliver-contact',
  thankYou: 'deliver-thank-you',
} as const;
/**
 * The queue of the erasures MailerLite left pending (finish-erasure.ts): one task per suppression entry,
 * retried until MailerLite has forgotten the mailbox. Not a delivery, so not among QUEUES.
 */
export const ERASURE_QUEUE = 'finish-erasure';
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES] | typeof ERASURE_QUEUE;

/** A contact to upsert into MailerLite: the list's stored sign-up decides, not the caller. */
export interface ContactTask {
  /** As the page sent it (trimmed), and so as stored. */
  email: string;
  subscription_type: SubscriptionType;
  source: string;
}

/** A thank-you mail to send, at most once per mailbox ever. */
export interface ThankYouTask {
  email: string;
}

/**
 * An erasure to finish: the suppression entry's id (the mailbox key), never an address; the entry holds the
 * addresses sealed until MailerLite has forgotten them.
 */
export interface FinishErasureTask {
  entry: string;
}

/** Enqueues one task; a task with the same id already enqueued (or run) is not an error. */
export type Enqueue = <T extends ContactTask | ThankYouTask | FinishErasureTask>(
  queue: QueueName,
  payload: T,
  task: DeliveryTask,
) => Promise<'enqueued' | 'duplicate'>;

/** A task's id, and when it may run at the earliest (clock ms; absent: at once). */
export interface DeliveryTask {
  id: string;
  notBefore?: number;
}

/**
 * One id for one piece of work, whoever enqueues it: the stored row's trigger (triggers/index-signup.ts) and
 * the page's callable name a task by the queue, the mailbox (its key, privacy/mailbox-key.ts), the list and
 * a time bucket of BUCKET_MS; Cloud Tasks refuses a second task with an id it has seen, so the two make one
 * dispatch (the contact queue's dispatches are MailerLite's budget), and a second press, a client retry or
 * a retried trigger enqueue nothing new.
 *
 * The trigger's bucket is the row's `created_at`, and its task runs at once. The callable's bucket is the
 * time of the call, a moment after the insert (the same bucket, but at a bucket's edge), and its task runs
 * only once that bucket has ended (`notBefore`, afterBucket): by then every row of the bucket is committed,
 * so whichever task the id names sees the row. That is what makes a stranger's call harmless: a guess made
 * before someone signs up cannot pre-empt their row's task with a task that runs too early and finds
 * nothing; it runs after the bucket, finds the row if there is one, and costs one short look if not. The
 * callable hurries the work only when the trigger is late (past the bucket's end); otherwise its enqueue is
 * a duplicate and costs nothing.
 *
 * Keyed by HMAC under a key derived from MAILBOX_KEY_SECRET for this one use: a stranger cannot compute an
 * id, nor learn anything from one.
 */
export const BUCKET_MS = 10_000;
/** How long after its bucket's end a callable's task runs: a margin for the clocks of two servers. */
export const AFTER_BUCKET_MS = 1_000;

const TASK_ID_PURPOSE = 'goody-task-id-v2';

export function deliveryTaskId(
  mailboxSecret: string,
  queue: QueueName,
  work: { mailboxKey: string; list: string; at: number },
): string {
  const bucket = Math.floor(work.at / BUCKET_MS);
  const mac = createHmac('sha256', derivedKey(mailboxSecret, TASK_ID_PURPOSE, 'task-id'))
    .update(`${queue}\n${work.mailboxKey}\n${work.list}\n${bucket}`, 'utf8')
    .digest('base64url');
  // Cloud Tasks ids: letters, digits, hyphens and underscores.
  return `${queue}-${bucket}-${mac.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/**
 * The finish task of one mark on a suppression entry (its `pending_id`): a second click while that mark
 * waits names the same task, and a later mark (after the entry was finished) a new one. Both halves are
 * base64url or a UUID, as Cloud Tasks ids allow; no address is in either.
 */
export function finishErasureTaskId(entry: string, mark: string): string {
  return `${ERASURE_QUEUE}-${entry}-${mark}`;
}

/** When a task named in the bucket of `at` may run, if a callable enqueued it: just after that bucket. */
export function afterBucket(at: number): number {
  return (Math.floor(at / BUCKET_MS) + 1) * BUCKET_MS + AFTER_BUCKET_MS;
}

/**
 * A task's body as the worker's parser reads it, without what older tasks carried beside it
 * (`enqueued_at`); null when it does not parse, logged once (`malformed`, nothing about the body), and the
 * worker drops the task: a retry cannot fix it.
 */
export function parseTask<T>(
  task: unknown,
  parse: (body: unknown) => T,
  logger: Logger,
  malformed: LogEvent,
): T | null {
  const { enqueued_at: _enqueuedAt, ...body } = (task ?? {}) as { enqueued_at?: unknown };
  try {
    return parse(body);
  } catch {
    logger.error(malformed, {});
    return null;
  }
}

/**
 * A failure Cloud Tasks should retry: the worker throws it, the dispatch answers 5xx, and the task comes
 * back after its backoff. Anything a retry cannot fix is logged once and the task acknowledged instead.
 */
export class RetryLater extends Error {
  override name = 'RetryLater';
}

/**
 * What the workers ask Cloud Tasks for. Retried for two days (at least a day, as an outage of MailerLite
 * or of the SMTP relay may last a night), backoff from 10 s doubling to 10 min.
 */
export const RETRY = {
  maxAttempts: 400,
  maxRetrySeconds: 2 * 24 * 60 * 60,
  minBackoffSeconds: 10,
  maxBackoffSeconds: 600,
  maxDoublings: 6,
} as const;

/** A rate read from the environment when the functions load, or the default when unset or not a positive number. */
export function positiveNumber(raw: string | undefined, fallback: number): number {
  const value = Number(raw);
  return raw && Number.isFinite(value) && value > 0 ? value : fallback;
}

/** Cloud Tasks through firebase-admin (locally the Cloud Tasks emulator, CLOUD_TASKS_EMULATOR_HOST). */
export const cloudTasksEnqueue: Enqueue = async (queue, payload, { id, notBefore }) => {
  const { getFunctions } = await import('firebase-admin/functions');
  try {
    await getFunctions(await tasksApp())
      .taskQueue(queue)
      .enqueue(payload, notBefore === undefined ? { id } : { id, scheduleTime: new Date(notBefore) });
    return 'enqueued';
  } catch (error) {
    if ((error as { code?: string }).code === 'functions/task-already-exists') return 'duplicate';
    throw error;
  }
};

/**
 * The default app in Cloud Functions, whose service account (the OIDC identity of each task) comes from
 * the metadata server once. Against the emulator there is no metadata server, and firebase-admin would ask
 * it again on every enqueue (about 2 s each) before falling back to a made-up account: an app given that
 * account up front skips the wait.
 */
async function tasksApp() {
  const { getApp, getApps, initializeApp } = await import('firebase-admin/app');
  if (!process.env.CLOUD_TASKS_EMULATOR_HOST) return getApps()[0] ?? initializeApp();
  const name = 'cloud-tasks-emulator';
  return getApps().some((app) => app.name === name)
    ? getApp(name)
    : initializeApp({ serviceAccountId: 'emulated-service-acct@email.com' }, name);
}
