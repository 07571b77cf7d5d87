// @vitest-environment node
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { withDeadline } from './deadline';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});

afterEach(() => {
  vi.useRealTimers();
});

const late = () => new Error('too late');

describe('withDeadline', () => {
  it('resolves with the answer in time and clears its timer', async () => {
    await expect(withDeadline(Promise.resolve('answer'), 1_000, late)).resolves.toBe('answer');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects with the failure in time (not the timeout) and clears its timer', async () => {
    const refused = new Error('refused');
    await expect(withDeadline(Promise.reject(refused), 1_000, late)).rejects.toBe(refused);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects with the timeout's error at the bound, not before, and ignores a late failure", async () => {
    let failLate!: (error: Error) => void;
    const work = new Promise<string>((_, reject) => {
      failLate = reject;
    });
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const outcome = withDeadline(work, 1_000, late).catch((error: unknown) => error);
      const seen = vi.fn();
      outcome.then(seen);

      await vi.advanceTimersByTimeAsync(999);
      expect(seen).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(await outcome).toEqual(new Error('too late'));
      expect(vi.getTimerCount()).toBe(0);

      failLate(new Error('the answer that finally came'));
      await new Promise((resolve) => setImmediate(resolve));
      expect(await outcome).toEqual(new Error('too late'));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});
