import { once } from 'node:events';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

const require = createRequire(import.meta.url);
const {
  controlEnqueueFaults,
  correctPacing,
  freeBackoffSlots,
  holdScheduledTasks,
  pacedBucket,
  scheduledAt,
} = require('./tasks-emulator-pacing.cjs') as {
  controlEnqueueFaults: (tasksEmulatorClass: unknown, express: unknown) => boolean;
  correctPacing: (taskQueueClass: unknown) => boolean;
  freeBackoffSlots: (taskQueueClass: unknown, taskStatus: unknown) => boolean;
  holdScheduledTasks: (taskQueueClass: unknown) => boolean;
  pacedBucket: (rate: number, emulatorBucket: number) => number;
  scheduledAt: (scheduleTime: unknown) => number | undefined;
};

interface EmulatorTaskQueue {
  enqueue(task: unknown): void;
  refillTokens(): void;
  dispatchTasks(): void;
  setDispatch(dispatches: unknown[]): void;
  processDispatch(): void;
  isActive(): boolean;
  delete(taskId: string): void;
  queue: { size(): number };
}
type TaskQueueClass = new (key: string, config: unknown) => EmulatorTaskQueue;

/** A fresh copy of firebase-tools' Cloud Tasks emulator module, whose queue class the launcher's preload corrects. */
function freshTaskQueueModule(): { TaskQueue: TaskQueueClass; TaskStatus: unknown } {
  const file = path.join(
    path.dirname(require.resolve('firebase-tools/package.json')),
    'lib/emulator/taskQueue.js',
  );
  delete require.cache[file];
  return require(file) as { TaskQueue: TaskQueueClass; TaskStatus: unknown };
}

function freshTaskQueueClass(): TaskQueueClass {
  return freshTaskQueueModule().TaskQueue;
}

/**
 * Runs one queue of `rate` a second for `seconds`, as the emulator does (a refill a second, dispatches in
 * between), with every dispatched task finishing at once: how many it dispatched.
 */
function dispatchedIn(TaskQueue: TaskQueueClass, rate: number, seconds: number): number {
  vi.useFakeTimers({ now: 0, toFake: ['Date'] });
  const queue = new TaskQueue('deliver-contact', {
    rateLimits: { maxDispatchesPerSecond: rate, maxConcurrentDispatches: 1000 },
    retryConfig: {
      maxAttempts: 3,
      maxRetrySeconds: null,
      maxBackoffSeconds: 60,
      maxDoublings: 4,
      minBackoffSeconds: 1,
    },
    defaultUri: 'http://127.0.0.1:1/deliver-contact',
  });
  const backlog = Math.ceil(rate * seconds) + 10;
  for (let n = 0; n < backlog; n++) {
    queue.enqueue({ name: `task-${n}`, httpRequest: { url: '', headers: {}, body: {} } });
  }
  for (let second = 0; second < seconds; second++) {
    vi.advanceTimersByTime(1000);
    queue.refillTokens();
    queue.dispatchTasks();
    queue.setDispatch(new Array(1000).fill(null));
  }
  return backlog - queue.queue.size();
}

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

/**
 * One attempt the queue made: which task, its X-CloudTasks-TaskRetryCount, when it started and ended (ms),
 * and its X-CloudTasks-TaskETA.
 */
interface Attempt {
  name: string;
  retry: number;
  start: number;
  end?: number;
  eta?: string;
}

/** How each task's attempts answer: its status and how long it takes (ms), from its name and retry count. */
type Handler = (name: string, retry: number) => { status: number; ms: number };

/**
 * Runs one queue as the emulator's controller does (tasksEmulator.js: a refill a second; while the queue is
 * active, dispatchTasks then processDispatch, here every 100 ms of a fake clock), its tasks answered by
 * `handler` through a stubbed fetch. `enqueue` lists the tasks to enqueue and when (ms). Every attempt, and
 * the most tasks ever in flight at once.
 */
async function runQueue(
  TaskQueue: TaskQueueClass,
  options: {
    concurrent: number;
    seconds: number;
    enqueue: Array<{ at: number; names: string[]; scheduleTime?: unknown }>;
    handler: Handler;
    /** Whatever else the test does with the queue at a given time (ms), after that time's enqueues. */
    at?: Record<number, (queue: EmulatorTaskQueue) => void>;
  },
): Promise<{ attempts: Attempt[]; mostInFlight: number }> {
  const { concurrent, seconds, enqueue, handler, at: actions = {} } = options;
  vi.useFakeTimers({ now: 0, toFake: ['Date'] });
  const attempts: Attempt[] = [];
  const inFlight: Array<{ attempt: Attempt; until: number; status: number; answer: (r: Response) => void }> =
    [];
  vi.stubGlobal('fetch', (_url: string, init: { headers: Record<string, string> }) => {
    const name = init.headers['X-CloudTasks-TaskName'] ?? '';
    const retry = Number(init.headers['X-CloudTasks-TaskRetryCount']);
    const attempt: Attempt = { name, retry, start: Date.now(), eta: init.headers['X-CloudTasks-TaskETA'] };
    attempts.push(attempt);
    const { status, ms } = handler(name, retry);
    if (ms === 0) {
      attempt.end = attempt.start;
      return Promise.resolve(new Response(null, { status }));
    }
    return new Promise<Response>((answer) => {
      inFlight.push({ attempt, until: Date.now() + ms, status, answer });
    });
  });
  const queue = new TaskQueue('deliver-contact', {
    rateLimits: { maxDispatchesPerSecond: 10, maxConcurrentDispatches: concurrent },
    retryConfig: {
      maxAttempts: 3,
      maxRetrySeconds: null,
      maxBackoffSeconds: 300,
      maxDoublings: 4,
      minBackoffSeconds: 10,
    },
    defaultUri: 'http://127.0.0.1:1/deliver-contact',
  });
  let mostInFlight = 0;
  for (let now = 0; now <= seconds * 1000; now += 100) {
    vi.setSystemTime(now);
    for (const { at, names, scheduleTime } of enqueue) {
      if (at !== now) continue;
      for (const name of names) {
        queue.enqueue({
          name: `queues/deliver-contact/tasks/${name}`,
          httpRequest: { url: '', headers: {}, body: {} },
          ...(scheduleTime === undefined ? {} : { scheduleTime }),
        });
      }
    }
    actions[now]?.(queue);
    if (now % 1000 === 0) queue.refillTokens();
    for (const call of inFlight.filter((c) => c.until <= now)) {
      inFlight.splice(inFlight.indexOf(call), 1);
      call.attempt.end = now;
      call.answer(new Response(null, { status: call.status }));
    }
    await new Promise((settled) => setImmediate(settled));
    if (queue.isActive()) {
      queue.dispatchTasks();
      queue.processDispatch();
    }
    await new Promise((settled) => setImmediate(settled));
    mostInFlight = Math.max(mostInFlight, inFlight.length);
  }
  return { attempts, mostInFlight };
}

/**
 * Three "guesses" fill a queue of three at once and fail their first attempt (retried after 10 s of backoff,
 * then answered), and six fresh tasks of 6 s each are enqueued a second after those failures.
 */
const guessesThenFresh = {
  concurrent: 3,
  seconds: 40,
  enqueue: [
    { at: 0, names: ['guess-0', 'guess-1', 'guess-2'] },
    { at: 2000, names: ['fresh-0', 'fresh-1', 'fresh-2', 'fresh-3', 'fresh-4', 'fresh-5'] },
  ],
  handler: (name: string, retry: number) =>
    name.startsWith('guess') && retry === 0
      ? { status: 503, ms: 0 }
      : { status: 200, ms: name.startsWith('fresh') ? 6000 : 0 },
};

/** Attempts by start, then task, then retry count (which slot a task ran in is the emulator's business). */
function inOrder(attempts: Attempt[]): Attempt[] {
  return [...attempts].sort((a, b) => a.start - b.start || a.name.localeCompare(b.name) || a.retry - b.retry);
}

function startsOf(attempts: Attempt[], prefix: string, retry?: number): number[] {
  return attempts
    .filter((a) => a.name.startsWith(prefix) && (retry === undefined || a.retry === retry))
    .map((a) => a.start);
}

describe('the Cloud Tasks emulator backoff preload', () => {
  it('as the emulator ships, tasks waiting out their backoff hold every slot: fresh tasks wait for the backoffs to end', async () => {
    const { attempts } = await runQueue(freshTaskQueueClass(), guessesThenFresh);
    const failed = startsOf(attempts, 'guess', 0);
    expect(failed).toEqual([1000, 1000, 1000]);
    const retried = startsOf(attempts, 'guess', 1);
    expect(retried).toEqual([11000, 11000, 11000]);
    // Enqueued at 2 s with tokens to spare and nothing in flight, yet no fresh task starts before the retries.
    expect(Math.min(...startsOf(attempts, 'fresh'))).toBeGreaterThanOrEqual(11000);
  });

  it('frees the slot of a task waiting out its backoff: fresh tasks run at once, the failed ones come back after their backoff with their retry count', async () => {
    const { TaskQueue, TaskStatus } = freshTaskQueueModule();
    expect(freeBackoffSlots(TaskQueue, TaskStatus)).toBe(true);
    const { attempts, mostInFlight } = await runQueue(TaskQueue, guessesThenFresh);
    expect(startsOf(attempts, 'guess', 0)).toEqual([1000, 1000, 1000]);
    // The fresh tasks start when they are enqueued, three at once (the queue's concurrency), the rest as those end.
    expect(startsOf(attempts, 'fresh')).toEqual([2000, 2000, 2000, 8100, 8100, 8100]);
    // The guesses' backoff ends at 11 s, while fresh tasks hold all three slots (until 14.1 s): they come back
    // with their retry count (1) on the first pass with free slots, so concurrency still bounds what runs.
    const retried = startsOf(attempts, 'guess', 1);
    expect(retried).toEqual([14200, 14200, 14200]);
    expect(attempts.filter((a) => a.end === undefined)).toEqual([]);
    expect(mostInFlight).toBe(3); // fresh tasks in flight at once (the guesses answer at once)
  });

  it('keeps the emulator retries and backoff: a task that always fails runs and gives up as it does as shipped', async () => {
    const alwaysFails = {
      concurrent: 2,
      seconds: 200,
      enqueue: [{ at: 0, names: ['guess-0', 'guess-1'] }],
      handler: () => ({ status: 503, ms: 0 }),
    };
    const asShipped = await runQueue(freshTaskQueueClass(), alwaysFails);
    const { TaskQueue, TaskStatus } = freshTaskQueueModule();
    freeBackoffSlots(TaskQueue, TaskStatus);
    const corrected = await runQueue(TaskQueue, alwaysFails);
    // 10, 20, 40 s of backoff, then failed for good after the fourth attempt (maxAttempts 3 retries).
    expect(startsOf(asShipped.attempts, 'guess-0')).toEqual([1000, 11000, 31000, 71000]);
    expect(inOrder(corrected.attempts)).toEqual(inOrder(asShipped.attempts));
  });

  it('frees backoff slots once, and refuses a class that is not the emulator queue it was written for', () => {
    const { TaskQueue, TaskStatus } = freshTaskQueueModule();
    expect(freeBackoffSlots(TaskQueue, TaskStatus)).toBe(true);
    expect(freeBackoffSlots(TaskQueue, TaskStatus)).toBe(false);
    expect(freeBackoffSlots(undefined, TaskStatus)).toBe(false);
    expect(freeBackoffSlots(class {}, TaskStatus)).toBe(false);
    expect(freeBackoffSlots(freshTaskQueueClass(), undefined)).toBe(false);
  });
});

/**
 * A task scheduled 5 s ahead (firebase-admin's scheduleTime, an RFC 3339 string) in a queue of one slot, and
 * a fresh task enqueued after it, every attempt answered at once.
 */
const scheduledThenFresh = {
  concurrent: 1,
  seconds: 10,
  enqueue: [
    { at: 1000, names: ['later-0'], scheduleTime: new Date(6000).toISOString() },
    { at: 1500, names: ['fresh-0'] },
  ],
  handler: () => ({ status: 200, ms: 0 }),
};

describe('the Cloud Tasks emulator schedule preload', () => {
  it('as the emulator ships, a task scheduled 5 s ahead runs at once', async () => {
    const { attempts } = await runQueue(freshTaskQueueClass(), scheduledThenFresh);
    expect(startsOf(attempts, 'later')).toEqual([1000]);
    expect(startsOf(attempts, 'fresh')).toEqual([1500]);
  });

  it('holds a task until its scheduleTime, without holding back a fresh task enqueued after it', async () => {
    const TaskQueue = freshTaskQueueClass();
    expect(holdScheduledTasks(TaskQueue)).toBe(true);
    const { attempts } = await runQueue(TaskQueue, scheduledThenFresh);
    // Not before 6 s, and on the emulator's first look after (its loop here looks every 100 ms).
    expect(startsOf(attempts, 'later')).toEqual([6000]);
    expect(attempts.find((a) => a.name === 'later-0')?.eta).toBe('1970-01-01T00:00:06.000Z');
    // Enqueued after it, into a queue of one slot: it runs when enqueued.
    expect(startsOf(attempts, 'fresh')).toEqual([1500]);
  });

  it('keeps the id of a held task (a second enqueue is refused), drops a held task that is deleted, and reads a { seconds, nanos } scheduleTime', async () => {
    const TaskQueue = freshTaskQueueClass();
    holdScheduledTasks(TaskQueue);
    const task = (name: string, scheduleTime?: unknown) => ({
      name: `queues/deliver-contact/tasks/${name}`,
      httpRequest: { url: '', headers: {}, body: {} },
      ...(scheduleTime === undefined ? {} : { scheduleTime }),
    });
    const { attempts } = await runQueue(TaskQueue, {
      concurrent: 2,
      seconds: 12,
      enqueue: [
        { at: 1000, names: ['later-0'], scheduleTime: { seconds: '4', nanos: 500_000_000 } },
        { at: 1000, names: ['later-1'], scheduleTime: new Date(5000).toISOString() },
      ],
      at: {
        1200: (queue) => {
          expect(() => queue.enqueue(task('later-0'))).toThrow(/already been queued/);
          expect(() => queue.enqueue(task('later-0', new Date(9000).toISOString()))).toThrow(
            /already been queued/,
          );
          queue.delete('queues/deliver-contact/tasks/later-1');
        },
      },
      handler: () => ({ status: 200, ms: 0 }),
    });
    // Due at 4.5 s: the emulator's first look at or after it.
    expect(attempts.map((a) => [a.name, a.start])).toEqual([['later-0', 4500]]);
  });

  it('with all three corrections, a held task is dispatched, retried and backed off as the emulator does', async () => {
    const { TaskQueue, TaskStatus } = freshTaskQueueModule();
    expect(correctPacing(TaskQueue)).toBe(true);
    expect(freeBackoffSlots(TaskQueue, TaskStatus)).toBe(true);
    expect(holdScheduledTasks(TaskQueue)).toBe(true);
    const { attempts } = await runQueue(TaskQueue, {
      concurrent: 1,
      seconds: 20,
      enqueue: [
        { at: 1000, names: ['later-0'], scheduleTime: new Date(3000).toISOString() },
        { at: 1000, names: ['fresh-0', 'fresh-1'] },
      ],
      // The held task fails its first attempt (a backoff of 10 s), and each fresh one runs for 1 s.
      handler: (name, retry) =>
        name.startsWith('later') && retry === 0 ? { status: 503, ms: 0 } : { status: 200, ms: 1000 },
    });
    expect(inOrder(attempts).map((a) => [a.name, a.retry, a.start])).toEqual([
      ['fresh-0', 0, 1000],
      ['fresh-1', 0, 2100],
      ['later-0', 0, 3200],
      ['later-0', 1, 13200],
    ]);
  });

  it('reads when a task is due: RFC 3339 (never a millisecond early), { seconds, nanos }, or none', () => {
    expect(scheduledAt('1970-01-01T00:00:06.000Z')).toBe(6000);
    expect(scheduledAt('1970-01-01T02:00:06+02:00')).toBe(6000);
    expect(scheduledAt('1970-01-01T00:00:06.000000001Z')).toBe(6001);
    expect(scheduledAt('1970-01-01T00:00:06.001000000Z')).toBe(6001);
    expect(scheduledAt({ seconds: '6', nanos: 1 })).toBe(6001);
    expect(scheduledAt({ seconds: 6 })).toBe(6000);
    expect(scheduledAt(undefined)).toBeUndefined();
    expect(scheduledAt('soon')).toBeUndefined();
    expect(scheduledAt({ seconds: 'soon' })).toBeUndefined();
  });

  it('holds scheduled tasks once, and refuses a class that is not the emulator queue it was written for', () => {
    const TaskQueue = freshTaskQueueClass();
    expect(holdScheduledTasks(TaskQueue)).toBe(true);
    expect(holdScheduledTasks(TaskQueue)).toBe(false);
    expect(holdScheduledTasks(undefined)).toBe(false);
    expect(holdScheduledTasks(class {})).toBe(false);
  });
});

describe('the Cloud Tasks emulator pacing preload', () => {
  it('makes a queue of 115 a minute dispatch 115 a minute, where the emulator as it ships dispatches 60', () => {
    const asShipped = freshTaskQueueClass();
    expect(dispatchedIn(asShipped, 115 / 60, 600)).toBe(600);

    const corrected = freshTaskQueueClass();
    expect(correctPacing(corrected)).toBe(true);
    expect(dispatchedIn(corrected, 115 / 60, 600)).toBe(1150);
  });

  it('keeps a fractional compressed rate (7.67 a second) at its rate, and a whole one as it was', () => {
    const TaskQueue = freshTaskQueueClass();
    correctPacing(TaskQueue);
    expect(dispatchedIn(TaskQueue, (115 * 4) / 60, 60)).toBe(460);
    expect(dispatchedIn(TaskQueue, 23, 60)).toBe(1380);
  });

  it('wraps the class once, and refuses a class that is not the emulator queue it was written for', () => {
    const TaskQueue = freshTaskQueueClass();
    expect(correctPacing(TaskQueue)).toBe(true);
    expect(correctPacing(TaskQueue)).toBe(false);
    expect(correctPacing(undefined)).toBe(false);
    expect(correctPacing(class {})).toBe(false);
  });

  it('sizes the bucket at the rate plus one token, never below the emulator own', () => {
    expect(pacedBucket(115 / 60, 1.1)).toBeCloseTo(2.9167, 4);
    expect(pacedBucket(0.5, 1.1)).toBe(1.5);
    expect(pacedBucket(1, 5)).toBe(5);
  });
});

interface TasksEmulatorInstance {
  createHubServer(): { listen(port: number, host: string): Server };
  controller: { stop(): void };
}
type TasksEmulatorClass = new (args: { host: string; port: number }) => TasksEmulatorInstance;

/** A fresh copy of firebase-tools' Cloud Tasks emulator (its HTTP server), and firebase-tools' own express. */
function freshTasksEmulator(): { TasksEmulator: TasksEmulatorClass; express: unknown } {
  const root = path.dirname(require.resolve('firebase-tools/package.json'));
  const file = path.join(root, 'lib/emulator/tasksEmulator.js');
  delete require.cache[file];
  const { TasksEmulator } = require(file) as { TasksEmulator: TasksEmulatorClass };
  return { TasksEmulator, express: require(require.resolve('express', { paths: [root] })) };
}

describe('the Cloud Tasks emulator enqueue faults (GOODY_TASKS_EMULATOR_FAULTS=on)', () => {
  /**
   * The emulator's own server on a free loopback port, with a queue made as the Functions emulator makes it;
   * `enqueue` sends a task as firebase-admin's TaskQueue.enqueue does (the body base64, a name), answering the
   * status.
   */
  async function serve(TasksEmulator: TasksEmulatorClass) {
    const emulator = new TasksEmulator({ host: '127.0.0.1', port: 0 });
    const server = emulator.createHubServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const queue = `${base}/projects/demo-goody/locations/us-central1/queues/deliver-contact`;
    const post = (url: string, body: unknown) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post(queue, { rateLimits: { maxDispatchesPerSecond: 1 } })).status).toBe(200);
    let n = 0;
    return {
      base,
      enqueue: async () => {
        n += 1;
        const response = await post(`${queue}/tasks`, {
          task: {
            name: `projects/demo-goody/locations/us-central1/queues/deliver-contact/tasks/t${n}`,
            // Dispatched, if at all before the controller stops, to a port nothing listens on.
            httpRequest: {
              url: 'http://127.0.0.1:1/',
              headers: {},
              body: Buffer.from('{}').toString('base64'),
            },
          },
        });
        return { status: response.status, body: await response.text() };
      },
      faults: async (body?: unknown) => {
        const response = await fetch(`${base}/__control/faults`, {
          method: body === undefined ? 'GET' : 'PUT',
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      },
      close: async () => {
        emulator.controller.stop();
        server.close();
        await once(server, 'close');
      },
    };
  }

  it('answers 503 UNAVAILABLE to every enqueue while refusing, counts them, and takes tasks again once turned off', async () => {
    const { TasksEmulator, express } = freshTasksEmulator();
    expect(controlEnqueueFaults(TasksEmulator, express)).toBe(true);
    const stack = await serve(TasksEmulator);
    try {
      expect((await stack.enqueue()).status).toBe(200);
      expect(await stack.faults({ refuseEnqueue: true })).toEqual({
        status: 200,
        body: { refuseEnqueue: true, refused: 0 },
      });
      for (let i = 0; i < 2; i += 1) {
        const refused = await stack.enqueue();
        expect(refused.status).toBe(503);
        expect(JSON.parse(refused.body)).toEqual({
          error: { code: 503, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' },
        });
      }
      await stack.faults({ refuseEnqueue: false });
      // The emulator's own routes behind the control: the task it took, and its statistics.
      const again = await stack.enqueue();
      expect(again.status).toBe(200);
      expect(JSON.parse(again.body)).toMatchObject({ task: { name: expect.stringMatching(/\/t4$/) } });
      expect((await fetch(`${stack.base}/queueStats`)).status).toBe(200);
      expect(await stack.faults()).toEqual({ status: 200, body: { refuseEnqueue: false, refused: 2 } });
      expect((await stack.faults({ refuseEnqueue: 'yes' })).status).toBe(400);
      expect((await stack.faults({ down: true })).status).toBe(400);
    } finally {
      await stack.close();
    }
  });

  it('as the emulator ships (no control), has no fault route, and the control wraps the class once', async () => {
    const { TasksEmulator, express } = freshTasksEmulator();
    const stack = await serve(TasksEmulator);
    try {
      expect((await fetch(`${stack.base}/__control/faults`)).status).toBe(404);
      expect((await stack.enqueue()).status).toBe(200);
    } finally {
      await stack.close();
    }
    expect(controlEnqueueFaults(TasksEmulator, express)).toBe(true);
    expect(controlEnqueueFaults(TasksEmulator, express)).toBe(false);
    expect(controlEnqueueFaults(undefined, express)).toBe(false);
    expect(controlEnqueueFaults(class {}, express)).toBe(false);
  });
});
