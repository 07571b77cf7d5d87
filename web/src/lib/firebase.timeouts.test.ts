// @vitest-environment node
/**
 * The time bounds of the Firebase boundary, with the real SDKs over a fake `fetch` and a fake clock:
 * a call whose connection stays open with no answer fails at its bound (not a moment before), with
 * the error the screens turn into the spec's toasts, and a call that answers in time is unaffected
 * and leaves no timer behind.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeNetwork, letWorkRun, until } from '@/test/fakeNetwork';
import type { Backend } from './backend';

const network = fakeNetwork();
let backend: Backend;

beforeAll(async () => {
  vi.stubEnv('VITE_FIREBASE_PROJECT_ID', 'demo-goody');
  vi.stubGlobal('fetch', network.fetch);
  // The page's own origin, where the sign-up callables are called (the fake network answers any origin).
  vi.stubGlobal('location', new URL('http://127.0.0.1:5000/'));
  backend = await import('./firebase');
});

beforeEach(() => {
  network.reset();
  // Only the timers the bounds use are fake; setImmediate stays real so `until` can let work run.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});

afterEach(() => {
  network.releaseAll();
  vi.useRealTimers();
});

/** Watches a promise without ever leaving its rejection unhandled. */
function watch<T>(promise: Promise<T>) {
  const seen: { state: 'pending' | 'resolved' | 'rejected'; value?: T; error?: unknown } = {
    state: 'pending',
  };
  promise.then(
    (value) => Object.assign(seen, { state: 'resolved', value }),
    (error: unknown) => Object.assign(seen, { state: 'rejected', error }),
  );
  return seen;
}

/** Holds `route` open, starts the call, and checks it fails exactly at `bound` ms. */
async function expectFailureAtBound<T>(route: string, start: () => Promise<T>, bound: number) {
  network.hang(route);
  const call = watch(start());
  await until(() => network.requests.includes(route), `a request to ${route}`);

  await vi.advanceTimersByTimeAsync(bound - 1);
  expect(call.state, `still waiting 1 ms before the ${bound} ms bound`).toBe('pending');
  await vi.advanceTimersByTimeAsync(1);
  expect(call.state).toBe('rejected');
  expect(vi.getTimerCount(), 'timers left behind').toBe(0);

  // The answer that finally comes changes nothing.
  network.releaseAll();
  await letWorkRun();
  expect(call.state).toBe('rejected');
  return call.error;
}

const subscription = {
  email: 'teen@example.com',
  subscription_type: 'updates',
  source: 'hero_form',
} as const;

describe('the bounds are the ones documented', () => {
  it('10 s for the connection test and the insert, 20 s for the sign-up callables', () => {
    expect(backend.deadlines.connectionTestMs).toBe(10_000);
    expect(backend.deadlines.insertMs).toBe(10_000);
    expect(backend.deadlines.signupCallableMs).toBe(20_000);
  });

  it("the admin sync waits longer than the function's own deadline, so the client never gives up first", () => {
    const source = readFileSync(
      new URL('../../../functions/src/callables/sync-callable.ts', import.meta.url),
      'utf8',
    );
    expect(source).toMatch(/timeoutSeconds: SYNC_TIMEOUT_SECONDS\b/);
    const serverSeconds = Number(/\bSYNC_TIMEOUT_SECONDS = (\d+);/.exec(source)?.[1]);
    expect(serverSeconds).toBeGreaterThan(0);
    expect(backend.deadlines.syncCallableMs).toBeGreaterThan(serverSeconds * 1000);
  });
});

describe('the connection test', () => {
  it('fails at 10 s when the database holds the request unanswered', async () => {
    const error = await expectFailureAtBound('batchGet', () => backend.connectionTest(), 10_000);
    expect(error).toMatchObject({ code: 'deadline-exceeded' });
  });

  it('an answer in time is unaffected and leaves no timer', async () => {
    await expect(backend.connectionTest()).resolves.toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('the insert', () => {
  it('fails at 10 s with no database message (the screen says "Please try again later.")', async () => {
    const error = await expectFailureAtBound(
      'commit',
      () => backend.insertSubscription(subscription),
      10_000,
    );
    expect(error).toMatchObject({ code: 'deadline-exceeded', message: '' });
  });

  it('an answer in time returns the new id and leaves no timer', async () => {
    await expect(backend.insertSubscription(subscription)).resolves.toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9]{20}$/),
    });
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('the callables', () => {
  it.each([
    [
      'add-contact-to-mailerlite',
      () => backend.addContactToMailerlite({ email: 'a@example.com', source: 'hero_form' }),
    ],
    ['send-thank-you-email', () => backend.sendThankYouEmail({ email: 'a@example.com' })],
  ])('%s fails at 20 s with an empty message', async (route, start) => {
    const error = await expectFailureAtBound(route, start, 20_000);
    expect(error).toMatchObject({ code: 'functions/deadline-exceeded', message: '' });
  });

  it('sync-emails-to-mailerlite fails only at 570 s, with an empty message (the Sync Failed fallback)', async () => {
    const error = await expectFailureAtBound(
      'sync-emails-to-mailerlite',
      () => backend.syncEmailsToMailerlite(),
      570_000,
    );
    expect(error).toMatchObject({ code: 'functions/deadline-exceeded', message: '' });
  });

  it('an answer in time is returned and leaves no timer', async () => {
    await expect(backend.syncEmailsToMailerlite()).resolves.toEqual({ success: true, synced: 3 });
    await expect(backend.sendThankYouEmail({ email: 'a@example.com' })).resolves.toBeNull();
    expect(vi.getTimerCount()).toBe(0);
  });
});
