import { createHmac } from 'node:crypto';
import { derivedKey } from '../derived-key';
import type { LogEvent, Logger } from '../logs';

/** Queue names are the workers' function names: Firebase names a task-queue function's queue after it. */
export const QUEUES = {
  contact: 'deliver-contact',
  thankYou: 'deliver-thank-you',
} as const;
/** The queue of erasures MailerLite left pending (privacy/finish-erasure.ts); not a delivery. */
export const ERASURE_QUEUE = 'finish-erasure';
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES] | typeof ERASURE_QUEUE;

/** A task names the stored row, never an address: only a stored spelling is sent; Cloud Tasks holds none. */
export interface SignupTask {
  signup: string;
  round: number;
  /** The claim whose mail the relay accepted and the database did not save (deliver-thank-you.ts). */
  sent?: string;
}

/** The suppression entry's id (the mailbox key), never an address. */
export interface FinishErasureTask {
  entry: string;
}

/**
 * Enqueues one task under its id, to run at once or from `notBefore` (clock ms); a task with the same id
 * already enqueued (or run) is not an error.
 */
export type Enqueue = <T extends SignupTask | FinishErasureTask>(
  queue: QueueName,
  payload: T,
  task: { id: string; notBefore?: number },
) => Promise<'enqueued' | 'duplicate'>;

/** Firestore's document ids: not empty, at most 1,500 bytes, no slash, not `.`, `..` or `__…__`. */
export function parseSignupTask(body: unknown): SignupTask {
  const { signup, round, sent } = (body ?? {}) as { signup?: unknown; round?: unknown; sent?: unknown };
  if (
    typeof signup !== 'string' ||
    Buffer.byteLength(signup) > 1_500 ||
    /^$|\/|^\.\.?$|^__.*__$/.test(signup)
  ) {
    throw new Error('Not a sign-up id.');
  }
  if (typeof round !== 'number' || !Number.isSafeInteger(round) || round < 0) throw new Error('Not a round.');
  if (sent !== undefined && (typeof sent !== 'string' || !/^[A-Za-z0-9-]{1,64}$/.test(sent))) {
    throw new Error('Not an attempt id.');
  }
  return { signup, round, ...(sent === undefined ? {} : { sent }) };
}

const TASK_ID_PURPOSE = 'goody-task-id-v3';

/** A row as its tasks are named: with its `createTime`, so a row stored again under one id gets new tasks. */
export interface RowOfTasks {
  id: string;
  createTime: { seconds: number; nanoseconds: number };
}

/**
 * One round of one part's task id: an HMAC, so no caller can choose, predict or take it, and no sequential
 * prefix crowds one Cloud Tasks shard. A retried trigger names the same task; a new round a new one.
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

/** One task per mark (`pending_id`) of an entry: a second click while it waits names the same task. */
export function finishErasureTaskId(entry: string, mark: string): string {
  return `${ERASURE_QUEUE}-${entry}-${mark}`;
}

/** A task's body parsed, or null, logged once without the body: a retry cannot fix it, so it is dropped. */
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

/** A failure Cloud Tasks should retry: thrown, so the dispatch answers 5xx. */
export class RetryLater extends Error {
  override name = 'RetryLater';
  constructor(
    message: string,
    /** The row's `last_error`: a code, never an address. */
    readonly code = 'retry',
    /** Our setup or the service refused us: the part waits, saying so. */
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

/** Two days of retries (an outage may last a night), backoff 10 s doubling to 10 min; env overrides. */
export const RETRY = {
  maxAttempts: positiveNumber(process.env.DELIVERY_MAX_ATTEMPTS, 400),
  maxRetrySeconds: positiveNumber(process.env.DELIVERY_MAX_RETRY_SECONDS, 2 * 24 * 60 * 60),
  minBackoffSeconds: positiveNumber(process.env.DELIVERY_MIN_BACKOFF_SECONDS, 10),
  maxBackoffSeconds: Math.max(positiveNumber(process.env.DELIVERY_MIN_BACKOFF_SECONDS, 10), 600),
  maxDoublings: 6,
};

/** Cloud Tasks' retry settings of a queue (firebase-functions' `retryConfig`). */
export type RetrySettings = typeof RETRY;

/** How long Cloud Tasks may retry a task: it stops once both the attempts and the duration are spent. */
export function retryWindowMs(retry: RetrySettings): number {
  let attempts = 0;
  for (let attempt = 1; attempt < retry.maxAttempts; attempt += 1) {
    // Doubled maxDoublings times, then grown by the last doubling's step each time.
    const multiplier =
      2 ** Math.min(attempt - 1, retry.maxDoublings) * (1 + Math.max(0, attempt - 1 - retry.maxDoublings));
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

/** On the emulator a service account up front, else firebase-admin asks for one (2 s) per enqueue. */
async function tasksApp() {
  const { getApp, getApps, initializeApp } = await import('firebase-admin/app');
  if (!process.env.CLOUD_TASKS_EMULATOR_HOST) return getApps()[0] ?? initializeApp();
  const name = 'cloud-tasks-emulator';
  return getApps().some((app) => app.name === name)
    ? getApp(name)
    : initializeApp({ serviceAccountId: 'emulated-service-acct@email.com' }, name);
}
