import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { firebaseMock } from '@/test/firebaseMock';

vi.mock('@/lib/firebase', () => firebaseMock);

/** A window stand-in whose idle callback and load event the test fires by hand. */
function fakeWindow(readyState: DocumentReadyState, withIdleCallback = true) {
  const idle: (() => void)[] = [];
  const listeners: Record<string, () => void> = {};
  const target = {
    document: { readyState },
    requestIdleCallback: withIdleCallback
      ? vi.fn((callback: () => void) => {
          idle.push(callback);
          return idle.length;
        })
      : undefined,
    cancelIdleCallback: vi.fn(),
    addEventListener: vi.fn((type: string, listener: () => void) => {
      listeners[type] = listener;
    }),
    removeEventListener: vi.fn(),
  };
  return { target: target as unknown as Window, idle, listeners, raw: target };
}

beforeEach(() => {
  vi.resetModules();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('loadBackend', () => {
  it('loads the Firebase module once and hands the same module to every caller', async () => {
    const { loadBackend } = await import('./backend');
    const [first, second] = await Promise.all([loadBackend(), loadBackend()]);
    expect(first).toBe(second);
    expect(first.connectionTest).toBe(firebaseMock.connectionTest);
  });
});

describe('preloadBackendWhenIdle', () => {
  it('waits for the load event, then asks for an idle moment', async () => {
    const { preloadBackendWhenIdle } = await import('./backend');
    const { target, idle, listeners, raw } = fakeWindow('loading');

    preloadBackendWhenIdle(target);
    expect(raw.requestIdleCallback).not.toHaveBeenCalled();
    listeners.load?.();
    expect(raw.requestIdleCallback).toHaveBeenCalledTimes(1);
    expect(idle).toHaveLength(1);
  });

  it('schedules at once when the page has already loaded, and cancels cleanly', async () => {
    const { preloadBackendWhenIdle } = await import('./backend');
    const { target, raw } = fakeWindow('complete');

    const cancel = preloadBackendWhenIdle(target);
    expect(raw.requestIdleCallback).toHaveBeenCalledTimes(1);
    cancel();
    expect(raw.cancelIdleCallback).toHaveBeenCalledWith(1);
  });

  it('falls back to a timer where requestIdleCallback does not exist', async () => {
    vi.useFakeTimers();
    const { preloadBackendWhenIdle } = await import('./backend');
    const { target } = fakeWindow('complete', false);
    const cancel = preloadBackendWhenIdle(target);
    expect(vi.getTimerCount()).toBe(1);
    cancel();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('prepareSignup (the visitor types an address)', () => {
  beforeEach(() => {
    firebaseMock.warmConnectionTest.mockClear();
  });

  it('runs the Firebase module at once in a build with App Check, so its token is fetched before the press', async () => {
    vi.stubEnv('VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY', '6LdAbCdEfGhIjKlMnOpQrStUvWxYz-0123456_89');
    const { prepareSignup } = await import('./backend');
    const started = prepareSignup(false);
    expect(started).toBeInstanceOf(Promise);
    await expect(started).resolves.toBeUndefined();
  });

  it('leaves it for idle or the press in a build without App Check while the address is incomplete: typing pays for nothing', async () => {
    vi.useFakeTimers();
    vi.stubEnv('VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY', '');
    const { prepareSignup } = await import('./backend');
    expect(prepareSignup(false)).toBeUndefined();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(firebaseMock.warmConnectionTest).not.toHaveBeenCalled();
  });

  it("once the address is complete, asks Firestore's preflight for the connection test, again only when the last one may have lapsed", async () => {
    vi.useFakeTimers();
    const { prepareSignup, PREFLIGHT_REFRESH_MS } = await import('./backend');
    prepareSignup(true);
    prepareSignup(true);
    await vi.advanceTimersByTimeAsync(100);
    expect(firebaseMock.warmConnectionTest).toHaveBeenCalledTimes(1);

    // Typing on: nothing more while the warmed preflight is counted on.
    prepareSignup(true);
    await vi.advanceTimersByTimeAsync(PREFLIGHT_REFRESH_MS - 200);
    prepareSignup(true);
    await vi.advanceTimersByTimeAsync(100);
    expect(firebaseMock.warmConnectionTest).toHaveBeenCalledTimes(1);

    // Still typing after it may have lapsed: asked again.
    await vi.advanceTimersByTimeAsync(200);
    prepareSignup(true);
    await vi.advanceTimersByTimeAsync(100);
    expect(firebaseMock.warmConnectionTest).toHaveBeenCalledTimes(2);
  });

  it('a press before the warm-up went out leaves the connection test the only read', async () => {
    vi.useFakeTimers();
    const { prepareSignup, startingSignup } = await import('./backend');
    prepareSignup(true);
    startingSignup();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(firebaseMock.warmConnectionTest).not.toHaveBeenCalled();
  });

  it('a press while the warm-up waits for the Firebase module drops it: the read is not sent after the press', async () => {
    vi.useFakeTimers();
    const { prepareSignup, startingSignup } = await import('./backend');
    prepareSignup(true);
    // The timer fires and asks for the module; the press comes before the module has been handed over.
    vi.advanceTimersByTime(100);
    startingSignup();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(firebaseMock.warmConnectionTest).not.toHaveBeenCalled();
  });
});
