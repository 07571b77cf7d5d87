import '../global-options';
import type { DocumentSnapshot } from 'firebase-admin/firestore';
import { onSchedule } from 'firebase-functions/v2/scheduler';
import { onTaskDispatched } from 'firebase-functions/v2/tasks';
import { type Clock, systemClock } from '../clock';
import { SUPPRESSIONS } from '../contract';
import {
  cloudTasksEnqueue,
  type Enqueue,
  ERASURE_QUEUE,
  finishErasureTaskId,
  parseTask,
  RetryLater,
} from '../delivery/queue';
import { adminFirestore } from '../firestore';
import { cloudLogger } from '../logs';
import { mailerLiteFromParams } from '../mailerlite/from-params';
import { MAILBOX_KEY_SECRET, MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET } from '../params';
import { type EraseDeps, finishErasure } from './erasure';
import { mailboxesFromParams } from './mailboxes';

// What MailerLite or a crash left of an erasure (erasure.ts) is finished here: by the entry's own task,
// retried until MailerLite answers, and by a half-hourly job, the net under the tasks.

/** How long after the click its finish task first runs: MailerLite has just failed. */
export const FINISH_TASK_DELAY_MS = 60_000;

/** One task per entry and mark, naming the entry alone, a minute later. */
export function finishErasureLater(enqueue: Enqueue, clock: Clock) {
  return ({ entry, mark }: { entry: string; mark: string }) =>
    enqueue(
      ERASURE_QUEUE,
      { entry },
      { id: finishErasureTaskId(entry, mark), notBefore: clock.now() + FINISH_TASK_DELAY_MS },
    );
}

/** The hand-off of a deployed function that may leave an erasure pending: the click, deliver-contact. */
export const finishErasureOnCloudTasks = finishErasureLater(cloudTasksEnqueue, systemClock);

/** An erasure's deps in a deployed function, read from the params at call time, due `budgetMs` from now. */
export async function erasureDepsFromParams(budgetMs: number): Promise<EraseDeps> {
  const { client } = mailerLiteFromParams({ timeoutMs: 10_000 });
  const deadline = Date.now() + budgetMs;
  const db = await adminFirestore();
  return {
    db,
    client,
    clock: systemClock,
    logger: cloudLogger,
    mailboxes: mailboxesFromParams(db, finishErasureOnCloudTasks),
    deadline,
  };
}

/** Finishes a marked erasure; `unopenable` (UNSUBSCRIBE_SECRET rotated) leaves the mark for an operator. */
async function finishPendingEntry(
  entry: DocumentSnapshot,
  deps: EraseDeps,
): Promise<'finished' | 'pending' | 'unopenable' | 'not_pending'> {
  if (entry.get('pending') !== true) return 'not_pending';
  const addresses = deps.mailboxes.suppression.sealedAddresses(entry);
  if (!addresses) return 'unopenable';
  const report = await finishErasure(entry.ref, String(entry.get('pending_id')), addresses, deps);
  return report.mailerLite === 'pending' ? 'pending' : 'finished';
}

/** A suppression entry's id: a mailbox key (privacy/mailbox-key.ts), 43 base64url characters. */
function parseEntry(body: unknown): string {
  const entry = (body as { entry?: unknown } | null)?.entry;
  if (typeof entry !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(entry))
    throw new Error('Not a suppression entry.');
  return entry;
}

/**
 * Finishes an erasure MailerLite left pending, RetryLater while it still fails; an entry finished meanwhile
 * costs no request. Seals that no longer open are reported and the task dropped: a retry cannot open them.
 */
export async function handleFinishErasure(task: unknown, deps: EraseDeps) {
  const entry = parseTask(task, parseEntry, deps.logger, 'finish_erasure.task_malformed');
  if (!entry) return 'dropped';
  const outcome = await finishPendingEntry(await deps.db.collection(SUPPRESSIONS).doc(entry).get(), deps);
  if (outcome === 'pending') throw new RetryLater('MailerLite has not forgotten the mailbox yet.');
  if (outcome === 'unopenable') {
    deps.logger.error('pending_erasures.run', { finished: 0, still_pending: 0, unopenable: 1 });
  }
  return outcome;
}

/** A minute doubling to an hour, for three days (an outage may last a night); the job is the net. */
export const FINISH_ERASURE_RETRY = {
  maxAttempts: 100,
  maxRetrySeconds: 3 * 24 * 60 * 60,
  minBackoffSeconds: 60,
  maxBackoffSeconds: 60 * 60,
  maxDoublings: 6,
} as const;

const SECRETS = [MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET, MAILBOX_KEY_SECRET];

export const finishPendingErasure = onTaskDispatched(
  {
    secrets: SECRETS,
    timeoutSeconds: 120,
    retryConfig: FINISH_ERASURE_RETRY,
    // Within the 5 requests a minute the contact worker leaves to forgets.
    rateLimits: { maxDispatchesPerSecond: 2 / 60, maxConcurrentDispatches: 1 },
  },
  // The task's budget: its reads and deletes, and MailerLite's forgets, each request at most 10 s.
  async (request) => {
    await handleFinishErasure(request.data, await erasureDepsFromParams(90_000));
  },
);

/**
 * The net under the finish tasks (an erasure that died before its enqueue, a task that gave up): finishes
 * each entry still marked, 200 a run (a bigger backlog is worked through over the next runs). After
 * MailerLite's first failure (likely down) the rest wait for the next run; `stillPending` counts them with
 * those the run's deadline stopped, `unopenable` those sealed with another secret (UNSUBSCRIBE_SECRET was
 * rotated): kept, and reported for an operator.
 */
export async function finishPendingErasures(deps: EraseDeps) {
  const report = { finished: 0, stillPending: 0, unopenable: 0 };
  const pending = await deps.db.collection(SUPPRESSIONS).where('pending', '==', true).limit(200).get();
  if (pending.empty) return report;
  let mailerLiteFailed = false;
  for (const entry of pending.docs) {
    // After MailerLite's first failure the rest wait, but an entry whose seals do not open is still reported.
    const waiting = mailerLiteFailed && deps.mailboxes.suppression.sealedAddresses(entry) !== null;
    const outcome = waiting ? 'pending' : await finishPendingEntry(entry, deps);
    if (outcome === 'pending') mailerLiteFailed = true;
    report[outcome === 'unopenable' ? 'unopenable' : outcome === 'pending' ? 'stillPending' : 'finished'] +=
      1;
  }
  deps.logger[report.unopenable > 0 ? 'error' : 'info']('pending_erasures.run', {
    finished: report.finished,
    still_pending: report.stillPending,
    unopenable: report.unopenable,
  });
  return report;
}

export const finishErasures = onSchedule(
  {
    schedule: 'every 30 minutes',
    timeZone: 'Etc/UTC',
    secrets: SECRETS,
    timeoutSeconds: 300,
    maxInstances: 1,
    retryCount: 0,
  },
  async () => {
    await finishPendingErasures(await erasureDepsFromParams(240_000));
  },
);
