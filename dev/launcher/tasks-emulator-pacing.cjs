// Preloaded into firebase-tools by the launcher (node --require), beside parent-watch.cjs: makes the Cloud Tasks
// emulator (firebase-tools lib/emulator/taskQueue.js, class TaskQueue) pace, hold and schedule its queues as Cloud
// Tasks does. Rates, concurrency, retries, backoff lengths and deduplication stay the emulator's own.
//
// Pacing. The emulator adds `rate` tokens to a queue's bucket once a second and caps it at `rate`; a dispatch
// takes a whole token, so the fraction left is cut off by the next refill: deliver-contact's 115 a minute (1.92
// a second) dispatches 60 a minute. A bucket of `rate + 1` keeps the leftover, so dispatches average the rate.
//
// Backoff. A task waiting out its retry backoff stays in its dispatch slot (NOT_STARTED, skipped by runTask
// until the backoff ends), so six tasks in backoff stop deliver-contact (6 at once) for minutes; Cloud Tasks
// frees the slot. `freeBackoffSlots` sets such a task aside and puts it back into the first free slot once its
// backoff is over (before fresh tasks, without a token, as the emulator runs a retry), its attempt count, backoff
// and start time as the emulator set them.
//
// Schedule. Cloud Tasks never dispatches a task before its `scheduleTime` (an RFC 3339 string from
// firebase-admin, or a Timestamp's `{ seconds, nanos }`); the emulator dispatches it at once. `holdScheduledTasks`
// lets the emulator's `enqueue` take the task (its id kept for deduplication), then holds one due later aside, so
// the tasks behind it are not held back, and appends it to the queue once due; a held task deleted is dropped.
//
// Enqueue faults, for tests only (GOODY_TASKS_EMULATOR_FAULTS=on). Cloud Tasks can refuse an enqueue (an
// outage, the Enqueuer grant missing): `controlEnqueueFaults` serves `GET|PUT /__control/faults` with
// `{"refuseEnqueue": true|false}` on the emulator's port; while on, every enqueue is answered 503 UNAVAILABLE,
// as Google's API answers one it cannot take, and counted (`refused`).
//
// If a firebase-tools upgrade changes the classes, this says so on stderr and changes nothing. Plain CommonJS
// because it runs before any loader; tested in tasks-emulator-pacing.test.ts against firebase-tools' own classes.
'use strict';

/** The prototype's methods of these names, or undefined when one is missing (a firebase-tools that changed). */
function methodsOf(proto, names) {
  const methods = names.map((name) => proto?.[name]);
  return methods.every((method) => typeof method === 'function') ? methods : undefined;
}

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
 * Frees a task's dispatch slot while it waits out its backoff: wraps handleRetry, dispatchTasks and isActive
 * (`TaskStatus` is taskQueue.js's enum). False, and nothing changed, if the class is not the one expected.
 */
function freeBackoffSlots(TaskQueue, TaskStatus) {
  const proto = TaskQueue?.prototype;
  const shipped = methodsOf(proto, [
    'handleRetry',
    'dispatchTasks',
    'isActive',
    'processDispatch',
    'runTask',
  ]);
  if (!shipped || typeof TaskStatus?.NOT_STARTED !== 'number' || typeof TaskStatus?.RETRY !== 'number')
    return false;
  const [shippedRetry, shippedDispatch, shippedActive] = shipped;
  if (shippedRetry.goodyFreesSlot) return false;
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

/** Tasks taken out of the queue until their scheduleTime, per queue, soonest first. */
const SCHEDULED = 'goodyScheduled';

/**
 * When a task may first be dispatched, in ms since the epoch: its scheduleTime, an RFC 3339 string or a
 * Timestamp's `{ seconds, nanos }`, rounded up to the millisecond (never before). Undefined if it has none or
 * it cannot be read (the emulator then dispatches it at once, as it ships).
 */
function scheduledAt(scheduleTime) {
  if (typeof scheduleTime === 'string') {
    const ms = Date.parse(scheduleTime);
    if (!Number.isFinite(ms)) return undefined;
    // Date.parse keeps milliseconds and drops finer digits: a time past a whole millisecond counts as the next.
    const finer = /\.\d{3}(\d+)/.exec(scheduleTime)?.[1];
    return finer && /[1-9]/.test(finer) ? ms + 1 : ms;
  }
  if (scheduleTime !== null && typeof scheduleTime === 'object') {
    const seconds = Number(scheduleTime.seconds ?? 0);
    const nanos = Number(scheduleTime.nanos ?? 0);
    if (!Number.isFinite(seconds) || !Number.isFinite(nanos)) return undefined;
    return seconds * 1000 + Math.ceil(nanos / 1e6);
  }
  return undefined;
}

/**
 * Keeps a task whose scheduleTime is ahead out of the queue until then: wraps enqueue, dispatchTasks, isActive
 * and delete. False, and nothing changed, if the class is not the one expected.
 */
function holdScheduledTasks(TaskQueue) {
  const proto = TaskQueue?.prototype;
  const shipped = methodsOf(proto, ['enqueue', 'dispatchTasks', 'isActive', 'delete']);
  if (!shipped || shipped[0].goodyHoldsScheduled) return false;
  const [shippedEnqueue, shippedDispatch, shippedActive, shippedDelete] = shipped;
  const enqueue = function enqueue(task) {
    // The emulator's own enqueue first: it refuses an id it has seen and keeps this one, held or not.
    const result = shippedEnqueue.call(this, task);
    const due = scheduledAt(task?.scheduleTime);
    if (due === undefined || due <= Date.now()) return result;
    const queue = this.queue;
    // The task it just queued is the queue's last (firebase-tools' Queue); anything else is left where it is.
    const held = queue?.last?.data;
    if (held?.task !== task || typeof queue.remove !== 'function' || typeof queue.enqueue !== 'function') {
      if (!holdScheduledTasks.warned) {
        holdScheduledTasks.warned = true;
        process.stderr.write(
          "[tasks-emulator-pacing] firebase-tools' task queue is not the one expected: the Cloud Tasks emulator " +
            'dispatches a task at once, whatever its scheduleTime.\n',
        );
      }
    } else {
      queue.remove(task.name);
      if (!this[SCHEDULED]) this[SCHEDULED] = [];
      this[SCHEDULED].push({ due, held });
      this[SCHEDULED].sort((a, b) => a.due - b.due);
    }
    return result;
  };
  enqueue.goodyHoldsScheduled = true;
  proto.enqueue = enqueue;
  proto.dispatchTasks = function dispatchTasks() {
    const scheduled = this[SCHEDULED];
    if (scheduled?.length) {
      const now = Date.now();
      while (scheduled.length > 0 && scheduled[0].due <= now) {
        const { held } = scheduled[0];
        try {
          this.queue.enqueue(held.task.name, held);
        } catch {
          break; // the queue is full (its capacity): the task waits for room, still held
        }
        scheduled.shift();
      }
    }
    return shippedDispatch.call(this);
  };
  // An idle queue is active once a held task is due, so that the emulator's loop dispatches it.
  proto.isActive = function isActive() {
    const scheduled = this[SCHEDULED];
    return shippedActive.call(this) || (scheduled?.length > 0 && scheduled[0].due <= Date.now());
  };
  proto.delete = function deleteTask(taskId) {
    const scheduled = this[SCHEDULED];
    const index = scheduled ? scheduled.findIndex(({ held }) => held.task.name === taskId) : -1;
    if (index === -1) return shippedDelete.call(this, taskId);
    scheduled.splice(index, 1);
  };
  return true;
}

/** The emulator's enqueue route (tasksEmulator.js, createHubServer), as Cloud Tasks' REST API names it. */
const ENQUEUE_ROUTE = '/projects/:project_id/locations/:location_id/queues/:queue_name/tasks';

/**
 * Puts the enqueue fault's control in front of the emulator's express app (TasksEmulator's createHubServer;
 * `express` is firebase-tools' own). False, and nothing changed, if the class is not the one expected.
 */
function controlEnqueueFaults(TasksEmulator, express) {
  const proto = TasksEmulator?.prototype;
  const shipped = proto?.createHubServer;
  if (typeof shipped !== 'function' || typeof express !== 'function' || shipped.goodyFaults) return false;
  const faults = { refuseEnqueue: false, refused: 0 };
  const createHubServer = function createHubServer() {
    const hub = shipped.call(this);
    const app = express();
    app.get('/__control/faults', (_req, res) => res.json(faults));
    app.put('/__control/faults', express.json({ type: () => true }), (req, res) => {
      const body = req.body;
      const keys = body !== null && typeof body === 'object' ? Object.keys(body) : [];
      if (keys.length !== 1 || keys[0] !== 'refuseEnqueue' || typeof body.refuseEnqueue !== 'boolean') {
        res.status(400).json({ message: 'The body is {"refuseEnqueue": true} or {"refuseEnqueue": false}.' });
        return;
      }
      faults.refuseEnqueue = body.refuseEnqueue;
      res.json(faults);
    });
    app.post(ENQUEUE_ROUTE, (_req, res, next) => {
      if (!faults.refuseEnqueue) return next();
      faults.refused += 1;
      res.status(503).json({
        error: { code: 503, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' },
      });
    });
    app.use(hub);
    return app;
  };
  createHubServer.goodyFaults = true;
  proto.createHubServer = createHubServer;
  return true;
}

module.exports = {
  pacedBucket,
  correctPacing,
  freeBackoffSlots,
  scheduledAt,
  holdScheduledTasks,
  controlEnqueueFaults,
};

/** Applies each correction (`[apply, what the emulator does without it]`) and warns of any that cannot be. */
function preload(corrections) {
  for (const [apply, without] of corrections) {
    let applied = false;
    try {
      applied = apply();
    } catch {
      applied = false;
    }
    if (!applied) {
      process.stderr.write(
        `[tasks-emulator-pacing] firebase-tools' Cloud Tasks emulator is not the one expected: ${without}.\n`,
      );
    }
  }
}

// Only as a preload (the launcher passes this file to --require): a test that imports the functions changes nothing.
if (process.execArgv.includes(__filename)) {
  const taskQueue = () => require('firebase-tools/lib/emulator/taskQueue.js');
  preload([
    [() => correctPacing(taskQueue().TaskQueue), 'a fractional rate dispatches at its whole part'],
    [
      () => freeBackoffSlots(taskQueue().TaskQueue, taskQueue().TaskStatus),
      'a task waiting out its retry backoff holds its dispatch slot',
    ],
    [
      () => holdScheduledTasks(taskQueue().TaskQueue),
      'a task is dispatched at once, whatever its scheduleTime',
    ],
    ...(process.env.GOODY_TASKS_EMULATOR_FAULTS === 'on'
      ? [
          [
            () =>
              controlEnqueueFaults(
                require('firebase-tools/lib/emulator/tasksEmulator.js').TasksEmulator,
                require(require.resolve('express', { paths: [require.resolve('firebase-tools')] })),
              ),
            'GOODY_TASKS_EMULATOR_FAULTS=on has no enqueue fault to control',
          ],
        ]
      : []),
  ]);
}
