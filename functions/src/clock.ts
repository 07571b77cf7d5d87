import { setTimeout as delay } from 'node:timers/promises';

/**
 * Time as the handlers see it. Injected so tests and benchmarks can observe waits, and so every
 * deadline in the code is computed from one source.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or rejects with an AbortError when the signal aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => delay(Math.max(0, ms), undefined, { signal }),
};
