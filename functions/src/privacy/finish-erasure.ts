import '../global-options';
import { onTaskDispatched } from 'firebase-functions/v2/tasks';
import { type Clock, systemClock } from '../clock';
import { SUPPRESSIONS } from '../contract';
import {
  cloudTasksEnqueue,
  type Enqueue,
  ERASURE_QUEUE,
  type FinishErasureTask,
  finishErasureTaskId,
  parseTask,
  RetryLater,
} from '../delivery/queue';
import { MAILBOX_KEY_SECRET, MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET } from '../params';
import { type EraseDeps, finishPendingEntry } from './erasure';
import { erasureDepsFromParams } from './erasure-from-params';

/** A suppression entry's id: a mailbox key (privacy/mailbox-key.ts), 43 base64url characters. */
const ENTRY_ID = /^[A-Za-z0-9_-]{43}$/;

export function parseFinishErasureTask(body: unknown): FinishErasureTask {
  const entry = (body as { entry?: unknown } | null)?.entry;
  if (typeof entry !== 'string' || !ENTRY_ID.test(entry)) throw new Error('Not a suppression entry.');
  return { entry };
}

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

export type FinishErasureOutcome = 'finished' | 'not_pending' | 'unopenable' | 'dropped';

/**
 * Finishes an erasure MailerLite left pending, RetryLater while it still fails; an entry finished meanwhile
 * costs no request. Seals that no longer open are reported and the task dropped: a retry cannot open them.
 */
export async function handleFinishErasure(task: unknown, deps: EraseDeps): Promise<FinishErasureOutcome> {
  const input = parseTask(task, parseFinishErasureTask, deps.logger, 'finish_erasure.task_malformed');
  if (!input) return 'dropped';
  const entry = await deps.db.collection(SUPPRESSIONS).doc(input.entry).get();
  const outcome = await finishPendingEntry(entry, deps);
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

/** The task's budget: its reads and deletes, and MailerLite's forgets, each request at most 10 s. */
const FINISH_ERASURE_BUDGET_MS = 90_000;

export const finishPendingErasure = onTaskDispatched(
  {
    secrets: [MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET, MAILBOX_KEY_SECRET],
    timeoutSeconds: 120,
    retryConfig: FINISH_ERASURE_RETRY,
    // Within the 5 requests a minute the contact worker leaves to forgets.
    rateLimits: { maxDispatchesPerSecond: 2 / 60, maxConcurrentDispatches: 1 },
  },
  async (request) => {
    await handleFinishErasure(request.data, await erasureDepsFromParams(FINISH_ERASURE_BUDGET_MS));
  },
);
