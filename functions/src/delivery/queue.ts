import { createHmac } from 'node:crypto';
import { derivedKey } from '../derived-key';
import type { LogEvent, Logger } from '../logs';

/**
 * The delivery of a sign-up, handed to Cloud Tasks. The stored row is the outbox: its create trigger
 * (delivery/index-signup.ts) is the one producer of its delivery work, a contact (deliver-contact.ts) and a
 * thank-you (deliver-thank-you.ts); the reconciler (delivery/reconcile-deliveries.ts) enqueues again what is
 * still pending once its tasks gave up. Cloud Tasks retries each task with backoff, paces the queues
 * (`rateLimits`) and drops a task whose id it has seen.
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

/**
 * A delivery task names the stored row, never an address: the worker reads the row and sends what it
 * holds, so what reaches MailerLite or an inbox is always a spelling someone stored, and Cloud Tasks holds no
 * address.
 */
export interface SignupTask {
  /** The document id of the row in email_subscriptions. */
  signup: string;
  /** The round of the row's part this task is (delivery/part-life.ts): a task of a round older than the part's does nothing. */
  round: number;
  /**
   * A thank-you the relay accepted whose `sent` the database did not save (delivery/deliver-thank-you.ts): the
   * claim's attempt id, which the record names while it is claimed. No address.
   */
  sent?: string;
}

/**
 * An erasure to finish: the suppression entry's id (the mailbox key), never an address; the entry holds the
 * addresses sealed until MailerLite has forgotten them.
 */
export interface FinishErasureTask {
  entry: string;
}

/** Enqueues one task; a task with the same id already enqueued (or run) is not an error. */
export type Enqueue = <T extends SignupTask | FinishErasureTask>(
  queue: QueueName,
  payload: T,
  task: DeliveryTask,
) => Promise<'enqueued' | 'duplicate'>;

/** A task's id, and when it may run at the earliest (clock ms; absent: at once). */
export interface DeliveryTask {
  id: string;
  notBefore?: number;
}

/** Firestore's document ids: not empty, at most 1,500 bytes, no slash, not `.`, `..` or `__…__`. */
export function parseSignupTask(body: unknown): SignupTask {
  const signup = (body as { signup?: unknown } | null)?.signup;
  if (
    typeof signup !== 'string' ||
    signup.length === 0 ||
    Buffer.byteLength(signup) > 1_500 ||
    signup.includes('/') ||
    signup === '.' ||
    signup === '..' ||
    /^__.*__$/.test(signup)
  ) {
    throw new Error('Not a sign-up id.');
  }
  const { round, sent } = body as { round?: unknown; sent?: unknown };
  if (typeof round !== 'number' || !Number.isSafeInteger(round) || round < 0) throw new Error('Not a round.');
  if (sent !== undefined && (typeof sent !== 'string' || !/^[A-Za-z0-9-]{1,64}$/.test(sent))) {
    throw new Error('Not an attempt id.');
  }
  return {
    signup,
    round,
    ...(sent === undefined ? {} : { sent: sent as string }),
  };
}

const TASK_ID_PURPOSE = 'goody-task-id-v3';

/**
 * A stored row as its tasks are named: its document id and the time Firestore created it (the document's
 * `createTime`, which only the database sets). A row erased and stored again under the same id (a client may
 * pick its document's id) is another row, with tasks of its own.
 */
export interface RowOfTasks {
  id: string;
  createTime: { seconds: number; nanoseconds: number };
}

/**
 * The id of one round of one part of a row's delivery: an HMAC of the queue, the row (its id and creation
 * time) and the round, under a key derived from MAILBOX_KEY_SECRET for this one use. Only the server can make
 * it, and only from a stored row: no caller can choose, predict or take it, and it carries no timestamp
 * prefix (Cloud Tasks spreads ids by their start, so a sequential prefix would crowd one shard). The trigger
 * enqueues round 0, a retried trigger names the same task (one dispatch); the reconciler and the mail
 * budget's wait enqueue the next round, a task Cloud Tasks has not seen.
 */
export function deliveryTaskId(
  mailboxSecret: string,
  queue: QueueName,
  row: RowOfTasks,
  round: number,
): string {
  const created = `${row.createTime.seconds}.${row.createTime.nanoseconds}`;
  const mac = createHmac('sha256', derivedKey(mailboxSecret, TASK_ID_PURPOSE, 'task-id'))
    .update(`${queue}\n${row.id}\n${created}\n${round}`, 'utf8')
    .digest('base64url');
  // Cloud Tasks ids: letters, digits, hyphens and underscores.
  return `${queue}-${mac.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/**
 * The finish task of one mark on a suppression entry (its `pending_id`): a second click while that mark
 * waits names the same task, and a later mark (after the entry was finished) a new one. Both halves are
 * base64url or a UUID, as Cloud Tasks ids allow; no address is in either.
 */
export function finishErasureTaskId(entry: string, mark: string): string {
  return `${ERASURE_QUEUE}-${entry}-${mark}`;
}

/**
 * A task's body as the worker's parser reads it; null when it does not parse, logged once (`malformed`,
 * nothing about the body), and the worker drops the task: a retry cannot fix it.
 */
export function parseTask<T>(
  task: unknown,
  parse: (body: unknown) => T,
  logger: Logger,
  malformed: LogEvent,
): T | null {
  try {
    return parse(task);
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
  constructor(
    message: string,
    /** What failed, as the row's `last_error` records it (delivery/row-delivery.ts): a code, never an address. */
    readonly code = 'retry',
    /**
     * `configuration`: our setup or the service refused us (not the person): the part waits, saying so on
     * the row, and Cloud Tasks retries it until an operator has fixed it (delivery/part-life.ts).
     */
    readonly wait?: 'configuration',
  ) {
    super(message);
  }
}

/** Runs a read or write of Firestore; its failure is one Cloud Tasks should retry (RetryLater, code `database`). */
export async function withDatabase<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch {
    throw new RetryLater('The database is unavailable.', 'database');
  }
}

/** Cloud Tasks' retry settings of a queue (firebase-functions' `retryConfig`). */
export interface RetrySettings {
  maxAttempts: number;
  maxRetrySeconds: number;
  minBackoffSeconds: number;
  maxBackoffSeconds: number;
  maxDoublings: number;
}

/**
 * What the delivery workers ask Cloud Tasks for: retried for two days (at least a day, as an outage of
 * MailerLite or of the SMTP relay may last a night), backoff from 10 s doubling to 10 min. What is still
 * pending after that is the reconciler's (delivery/reconcile-deliveries.ts). DELIVERY_MAX_ATTEMPTS,
 * DELIVERY_MAX_RETRY_SECONDS and DELIVERY_MIN_BACKOFF_SECONDS override them, read when the functions load
 * (functions/.env.<project>; the stack tests make tasks give up in seconds with them).
 */
export const RETRY: RetrySettings = {
  maxAttempts: positiveNumber(process.env.DELIVERY_MAX_ATTEMPTS, 400),
  maxRetrySeconds: positiveNumber(process.env.DELIVERY_MAX_RETRY_SECONDS, 2 * 24 * 60 * 60),
  minBackoffSeconds: positiveNumber(process.env.DELIVERY_MIN_BACKOFF_SECONDS, 10),
  maxBackoffSeconds: Math.max(positiveNumber(process.env.DELIVERY_MIN_BACKOFF_SECONDS, 10), 600),
  maxDoublings: 6,
};

/**
 * How long Cloud Tasks may go on retrying a task, from its first attempt: it stops once both the attempts
 * and the retry duration are spent (its documented rule), so the longer of the two, the attempts' being
 * their backoffs added up as Cloud Tasks grows them (doubling maxDoublings times, then linear, capped).
 */
export function retryWindowMs(retry: RetrySettings): number {
  let attempts = 0;
  for (let attempt = 1; attempt < retry.maxAttempts; attempt += 1) {
    const doublings = Math.min(attempt - 1, retry.maxDoublings);
    const multiplier =
      2 ** doublings + Math.max(0, attempt - 1 - retry.maxDoublings) * 2 ** retry.maxDoublings;
    attempts += Math.min(retry.maxBackoffSeconds, multiplier * retry.minBackoffSeconds);
  }
  return Math.max(attempts, retry.maxRetrySeconds) * 1000;
}

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
