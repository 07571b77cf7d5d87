import { createHmac, hkdfSync } from 'node:crypto';
import type { SubscriptionType } from '../schemas';

/**
 * The delivery of a sign-up, handed to Cloud Tasks: every stored row enqueues its contact and its
 * thank-you (signups/index-signup.ts), and the two sign-up callables may enqueue the same work sooner (they
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
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

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

/** Enqueues one task; a task with the same id already enqueued (or run) is not an error. */
export type Enqueue = <T extends ContactTask | ThankYouTask>(
  queue: QueueName,
  payload: T,
  id: string,
) => Promise<'enqueued' | 'duplicate'>;

/**
 * Every stored sign-up enqueues its own two tasks (signups/index-signup.ts), named after its document: a
 * retried trigger enqueues nothing twice. Document ids are random and never leave the server.
 */
export function rowTaskId(queue: QueueName, signupId: string): string {
  return `${queue}-row-${signupId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/**
 * The callables' tasks (the page's fast path) are named by address and time: Cloud Tasks refuses a second
 * enqueue with the same id within about an hour, which makes a second press or a client retry enqueue
 * nothing. The id is keyed:
 *
 * - by HMAC with a key derived from UNSUBSCRIBE_SECRET for this one purpose, so a stranger cannot compute
 *   it from an address (nor learn from a refused enqueue whether one exists: the callable answers the same
 *   either way), and the secret that signs unsubscribe links is never used as is for anything else;
 * - by a time bucket of BUCKET_MS, so a stranger who calls with someone's address before that person signs
 *   up blocks nothing for longer than the bucket. Nothing depends on it anyway: the stored row enqueues
 *   its own tasks, and a task that finds no stored sign-up is dropped at its first look.
 */
export const BUCKET_MS = 60_000;

const TASK_ID_PURPOSE = 'goody-task-id-v1';
const taskIdKeys = new Map<string, Buffer>();

function taskIdKey(secret: string): Buffer {
  let key = taskIdKeys.get(secret);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', secret, TASK_ID_PURPOSE, 'task-id', 32));
    taskIdKeys.set(secret, key);
  }
  return key;
}

export function taskId(
  secret: string,
  queue: QueueName,
  normalisedEmail: string,
  list: string,
  now: number,
): string {
  const bucket = Math.floor(now / BUCKET_MS);
  const mac = createHmac('sha256', taskIdKey(secret))
    .update(`${queue}\n${normalisedEmail}\n${list}\n${bucket}`, 'utf8')
    .digest('base64url');
  // Cloud Tasks ids: letters, digits, hyphens and underscores.
  return `${queue}-${bucket}-${mac.replace(/[^A-Za-z0-9_-]/g, '_')}`;
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
export const cloudTasksEnqueue: Enqueue = async (queue, payload, id) => {
  const { getFunctions } = await import('firebase-admin/functions');
  try {
    await getFunctions(await tasksApp())
      .taskQueue(queue)
      .enqueue(payload, { id });
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
