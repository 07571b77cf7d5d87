import { createRequire } from 'node:module';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

const require = createRequire(import.meta.url);
const { correctPacing, pacedBucket } = require('./tasks-emulator-pacing.cjs') as {
  correctPacing: (taskQueueClass: unknown) => boolean;
  pacedBucket: (rate: number, emulatorBucket: number) => number;
};

interface EmulatorTaskQueue {
  enqueue(task: unknown): void;
  refillTokens(): void;
  dispatchTasks(): void;
  setDispatch(dispatches: unknown[]): void;
  queue: { size(): number };
}
type TaskQueueClass = new (key: string, config: unknown) => EmulatorTaskQueue;

/** A fresh copy of firebase-tools' Cloud Tasks emulator queue, the class the launcher's preload corrects. */
function freshTaskQueueClass(): TaskQueueClass {
  const file = path.join(
    path.dirname(require.resolve('firebase-tools/package.json')),
    'lib/emulator/taskQueue.js',
  );
  delete require.cache[file];
  return (require(file) as { TaskQueue: TaskQueueClass }).TaskQueue;
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
