/**
 * The lazy door to `firebase.ts`. Nothing here imports Firebase statically, so pages and features
 * can depend on this module without pulling the SDKs into the initial JavaScript.
 */
export type Backend = typeof import('./firebase');

let loading: Promise<Backend> | null = null;

/** Loads (once) and returns the Firebase module. A failed load is forgotten so the next call retries. */
export function loadBackend(): Promise<Backend> {
  if (!loading) {
    loading = import('./firebase').catch((error: unknown) => {
      loading = null;
      throw error;
    });
  }
  return loading;
}

type IdleWindow = Window & {
  requestIdleCallback?: (callback: () => void, options?: { timeout: number }) => number;
  cancelIdleCallback?: (handle: number) => void;
};

/**
 * Fetches the Firebase module once the page has loaded and the browser is idle, so the first submit
 * does not wait for it, without competing with the first paint. Call from an effect (never during
 * render); returns a cancel function for the effect's cleanup.
 */
export function preloadBackendWhenIdle(target: IdleWindow = window): () => void {
  let cancelled = false;
  let idleHandle: number | undefined;
  let timeoutHandle: ReturnType<typeof setTimeout> | undefined;

  const preload = () => {
    if (!cancelled) loadBackend().catch(() => {}); // the submit that needs it reports any failure
  };
  const scheduleIdle = () => {
    if (cancelled) return;
    if (target.requestIdleCallback) idleHandle = target.requestIdleCallback(preload, { timeout: 5000 });
    else timeoutHandle = setTimeout(preload, 1500);
  };

  if (target.document.readyState === 'complete') scheduleIdle();
  else target.addEventListener('load', scheduleIdle, { once: true });

  return () => {
    cancelled = true;
    target.removeEventListener('load', scheduleIdle);
    if (idleHandle !== undefined) target.cancelIdleCallback?.(idleHandle);
    if (timeoutHandle !== undefined) clearTimeout(timeoutHandle);
  };
}
