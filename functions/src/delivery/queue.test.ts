import { describe, expect, it } from 'vitest';
import { deliveryTaskId, parseSignupTask, QUEUES, RETRY, retryWindowMs } from './queue';

const SECRET = 'test-mailbox-key-secret';

describe('delivery task ids (one round of one part of a row)', () => {
  const row = (id: string, seconds = 1_700_000_000) => ({ id, createTime: { seconds, nanoseconds: 500 } });

  it('name the row and the round: the same for a retried trigger, another for the next round, row or queue', () => {
    const id = deliveryTaskId(SECRET, QUEUES.contact, row('row-1'), 0);
    expect(deliveryTaskId(SECRET, QUEUES.contact, row('row-1'), 0)).toBe(id);
    expect(deliveryTaskId(SECRET, QUEUES.contact, row('row-1'), 1)).not.toBe(id);
    expect(deliveryTaskId(SECRET, QUEUES.contact, row('row-2'), 0)).not.toBe(id);
    expect(deliveryTaskId(SECRET, QUEUES.thankYou, row('row-1'), 0)).not.toBe(
      id.replace(QUEUES.contact, QUEUES.thankYou),
    );
  });

  it("name a row stored again under an erased row's id (a client may pick the id) anew: its creation time differs", () => {
    expect(deliveryTaskId(SECRET, QUEUES.contact, row('chosen', 1_700_000_000), 0)).not.toBe(
      deliveryTaskId(SECRET, QUEUES.contact, row('chosen', 1_700_000_900), 0),
    );
  });

  it('cannot be made without the secret, and carry neither the row id nor a timestamp prefix', () => {
    const ours = deliveryTaskId(SECRET, QUEUES.contact, row('AbCdEfGh12345678ijkl'), 0);
    expect(deliveryTaskId('another-secret', QUEUES.contact, row('AbCdEfGh12345678ijkl'), 0)).not.toBe(ours);
    expect(ours).not.toContain('AbCdEfGh12345678ijkl');
    expect(ours).not.toContain('1700000000');
    expect(ours).toMatch(/^deliver-contact-[A-Za-z0-9_-]{43}$/);
  });
});

describe('a delivery task body', () => {
  it('is the row id and its round; anything else is malformed', () => {
    expect(parseSignupTask({ signup: 'AbCdEfGh12345678ijkl', round: 3 })).toEqual({
      signup: 'AbCdEfGh12345678ijkl',
      round: 3,
    });
    // A thank-you whose save failed carries its claim's id.
    expect(parseSignupTask({ signup: 'abc', round: 2, sent: 'a1b2-c3' })).toEqual({
      signup: 'abc',
      round: 2,
      sent: 'a1b2-c3',
    });
    for (const body of [
      undefined,
      { email: 'kid@example.com' },
      { signup: '' },
      { signup: 'a/b' },
      { signup: '..' },
      { signup: '__name__' },
      { signup: 'x'.repeat(1_501) },
      { signup: 'abc' },
      { signup: 'abc', round: -1 },
      { signup: 'abc', round: 1.5 },
      { signup: 'abc', round: '2' },
      { signup: 'abc', round: 0, sent: 'not an id!' },
    ]) {
      expect(() => parseSignupTask(body)).toThrow();
    }
  });
});

describe("the delivery tasks' retry window", () => {
  it('is the longer of the attempts (their backoffs added up as Cloud Tasks grows them) and the retry duration', () => {
    const short = {
      maxAttempts: 4,
      maxRetrySeconds: 1,
      minBackoffSeconds: 1,
      maxBackoffSeconds: 600,
      maxDoublings: 6,
    };
    // Backoffs before attempts 2, 3 and 4: 1, 2, 4 s.
    expect(retryWindowMs(short)).toBe(7_000);
    expect(retryWindowMs({ ...short, maxRetrySeconds: 60 })).toBe(60_000);
    // Capped at the longest backoff, linear past maxDoublings.
    expect(retryWindowMs({ ...short, maxAttempts: 5, maxBackoffSeconds: 5, maxDoublings: 1 })).toBe(
      (1 + 2 + 4 + 5) * 1000,
    );
  });

  it('is about 2.7 days by default: 400 attempts at up to 10 minutes apart outlast the two days', () => {
    expect(RETRY).toMatchObject({ maxAttempts: 400, maxRetrySeconds: 172_800 });
    const days = retryWindowMs(RETRY) / 86_400_000;
    expect(days).toBeGreaterThan(2.7);
    expect(days).toBeLessThan(2.8);
  });
});
