/**
 * The lazy door to `firebase.ts`. Nothing here imports Firebase statically, so pages and features
 * can depend on this module without pulling the SDKs into the initial JavaScript.
 */
import { onIdle } from './idle';

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

/**
 * Fetches the Firebase module once the page has loaded and the browser is idle, so the first submit
 * does not wait for it, without competing with the first paint. Call from an effect (never during
 * render); returns a cancel function for the effect's cleanup.
 */
export function preloadBackendWhenIdle(target: Window = window): () => void {
  let cancelIdle: (() => void) | undefined;
  const scheduleIdle = () => {
    // The submit that needs the module reports any failure.
    cancelIdle = onIdle(() => loadBackend().catch(() => {}), { timeoutMs: 5000, fallbackMs: 1500 }, target);
  };

  if (target.document.readyState === 'complete') scheduleIdle();
  else target.addEventListener('load', scheduleIdle, { once: true });

  return () => {
    target.removeEventListener('load', scheduleIdle);
    cancelIdle?.();
  };
}
