// Preloaded into firebase-tools by the launcher (node --require), beside parent-watch.cjs: makes the Cloud Tasks
// emulator (firebase-tools lib/emulator/taskQueue.js, class TaskQueue) pace and hold its queues as Cloud Tasks does.
//
// Pacing. The emulator keeps a token bucket per queue, adds `rate` tokens once a second and caps the bucket at
// `rate` tokens. A dispatch takes a whole token, so the fraction left after a second's dispatches is cut off by
// the next refill: a queue of 115 a minute (1.92 a second, deliver-contact's MailerLite pace) dispatches 1 a
// second, 60 a minute, and 7.67 a second dispatches 7. A bucket of `rate + 1` never cuts a leftover below one
// token, so the dispatches average out to the rate (`correctPacing`).
//
// Backoff. The emulator runs a queue's tasks in `dispatches`, maxConcurrentDispatches slots. A failed attempt
// leaves its task in its slot as RETRY; `processDispatch` hands it to `handleRetry`, which sets its backoff and
// marks it NOT_STARTED in the same slot, and `runTask` then skips it on every pass until the backoff is over.
// So a task waiting out its backoff holds a slot (it is never back in `openDispatches`), and six tasks in
// backoff stop deliver-contact (6 at once) from dispatching anything else for minutes. Cloud Tasks frees the
// slot while a task waits. `freeBackoffSlots` takes such a task out of its slot into a list of its own and
// puts it back into the first free slot once its backoff is over (before fresh tasks, and without a token, as
// the emulator runs a retry), with its attempt count, its backoff and its start time as the emulator set them.
//
// Everything else about the queue (rates, concurrency of tasks in flight, retries, backoff lengths,
// deduplication) stays the emulator's own. If a firebase-tools upgrade changes the class, this says so on
// stderr and changes nothing. Plain CommonJS because it runs before any loader; tested in
// tasks-emulator-pacing.test.ts against firebase-tools' own TaskQueue.
'use strict';

const path = require('node:path');

/** The bucket size that lets a queue dispatch `rate` tasks a second on average under once-a-second refills. */
function pacedBucket(rate, emulatorBucket) {
  return Math.max(emulatorBucket, rate + 1);
}

/** Wraps TaskQueue.prototype.refillTokens; returns false if the class is not the one this was written for. */
function correctPacing(TaskQueue) {
  const refill = TaskQueue?.prototype?.refillTokens;
  if (typeof refill !== 'function' || refill.goodyPaced) return false;
  const paced = function refillTokens() {
    const rate = this.config?.rateLimits?.maxDispatchesPerSecond;
    if (typeof rate === 'number' && typeof this.maxTokens === 'number') {
      this.maxTokens = pacedBucket(rate, this.maxTokens);
    }
    return refill.call(this);
  };
  paced.goodyPaced = true;
  TaskQueue.prototype.refillTokens = paced;
  return true;
}

/** Tasks out of their slot while they wait out a backoff, per queue (the emulator's own fields stay as they are). */
const WAITING = 'goodyWaitingOutBackoff';

/** When a task waiting out its backoff may run again: the emulator's own test in runTask, from its last run. */
function backoffEnds(task) {
  return task.metadata.lastRunTime + task.metadata.currentBackoff * 1000;
}

/**
 * Frees a task's dispatch slot while it waits out its backoff. Wraps TaskQueue.prototype.handleRetry,
 * dispatchTasks and isActive; `TaskStatus` is the enum taskQueue.js exports beside the class. Returns false
 * (and changes nothing) if the class is not the one this was written for.
 */
function freeBackoffSlots(TaskQueue, TaskStatus) {
  const proto = TaskQueue?.prototype;
  const { handleRetry: shippedRetry, dispatchTasks: shippedDispatch, isActive: shippedActive } = proto ?? {};
  const { processDispatch, runTask } = proto ?? {};
  if (
    ![shippedRetry, shippedDispatch, shippedActive, processDispatch, runTask].every(
      (f) => typeof f === 'function',
    ) ||
    typeof TaskStatus?.NOT_STARTED !== 'number' ||
    typeof TaskStatus?.RETRY !== 'number' ||
    shippedRetry.goodyFreesSlot
  ) {
    return false;
  }
  const retry = function handleRetry(dispatchIndex) {
    const result = shippedRetry.call(this, dispatchIndex);
    const task = this.dispatches?.[dispatchIndex];
    const metadata = task?.metadata;
    // NOT_STARTED with a last run: the emulator will run it again once its backoff is over (FAILED: it will not).
    if (
      metadata?.status === TaskStatus.NOT_STARTED &&
      typeof metadata.lastRunTime === 'number' &&
      typeof metadata.currentBackoff === 'number' &&
      Array.isArray(this.openDispatches)
    ) {
      if (!this[WAITING]) this[WAITING] = [];
      this[WAITING].push(task);
      this.dispatches[dispatchIndex] = null;
      this.openDispatches.push(dispatchIndex);
    }
    return result;
  };
  retry.goodyFreesSlot = true;
  proto.handleRetry = retry;
  proto.dispatchTasks = function dispatchTasks() {
    const waiting = this[WAITING];
    if (waiting?.length) {
      const now = Date.now();
      waiting.sort((a, b) => backoffEnds(a) - backoffEnds(b));
      while (waiting.length > 0 && this.openDispatches.length > 0 && backoffEnds(waiting[0]) <= now) {
        this.dispatches[this.openDispatches.pop()] = waiting.shift();
      }
    }
    return shippedDispatch.call(this);
  };
  // The emulator only looks at an active queue: one whose only tasks wait out a backoff still is.
  proto.isActive = function isActive() {
    return shippedActive.call(this) || this[WAITING]?.length > 0;
  };
  return true;
}

module.exports = { pacedBucket, correctPacing, freeBackoffSlots };

// Only as a preload (the launcher passes this file to --require), where GOODY_TASKS_EMULATOR_PACING=off
// leaves the emulator as it ships (to measure it): both corrections off. A test that imports the functions
// changes nothing.
if (process.execArgv.includes(__filename) && process.env.GOODY_TASKS_EMULATOR_PACING !== 'off') {
  let taskQueue;
  try {
    const root = path.dirname(require.resolve('firebase-tools/package.json'));
    taskQueue = require(path.join(root, 'lib', 'emulator', 'taskQueue.js'));
  } catch {
    taskQueue = undefined;
  }
  if (!correctPacing(taskQueue?.TaskQueue)) {
    process.stderr.write(
      '[tasks-emulator-pacing] firebase-tools has no TaskQueue.refillTokens where expected: the Cloud Tasks ' +
        'emulator keeps its own pacing (a fractional rate dispatches at its whole part).\n',
    );
  }
  if (!freeBackoffSlots(taskQueue?.TaskQueue, taskQueue?.TaskStatus)) {
    process.stderr.write(
      '[tasks-emulator-pacing] firebase-tools has no TaskQueue.handleRetry, dispatchTasks, isActive, ' +
        'processDispatch, runTask or TaskStatus where expected: the Cloud Tasks emulator keeps a task waiting out ' +
        'its retry backoff in its dispatch slot (tasks in backoff hold back fresh ones).\n',
    );
  }
}
