import { setTimeout as delay } from 'node:timers/promises';

/**
 * Time as the handlers see it. Injected so tests and benchmarks can observe waits, and so every
 * deadline in the code is computed from one source.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    if (ms <= 0) {
      signal?.throwIfAborted();
      return;
    }
    await delay(ms, undefined, signal ? { signal } : undefined);
  },
};
