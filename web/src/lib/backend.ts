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
 * How long a warmed preflight is counted on: under the 5 s Chromium keeps one that names no
 * `Access-Control-Max-Age` (what the Firestore emulator answers), so typing that goes on re-asks it in time.
 */
export const PREFLIGHT_REFRESH_MS = 4_000;
/** A press this soon after the address is complete makes its own connection test the only read. */
const WARM_DELAY_MS = 100;

let warmedAt = Number.NEGATIVE_INFINITY;
let pendingWarm: ReturnType<typeof setTimeout> | undefined;
/** Counts presses, so a warm-up still waiting for the module when one comes is dropped. */
let signupsStarted = 0;

/**
 * The visitor is typing an address in a sign-up field; `addressComplete` when the field holds a valid one.
 *
 * - With App Check on, the Firebase module runs now rather than when idle or at the press: running it
 *   starts App Check, which fetches its token at once (reCAPTCHA Enterprise's script and attestation, then
 *   the token exchange: several round trips on a phone), so the sign-up's first call finds a token instead
 *   of waiting for one. Without App Check nothing waits on the module's run until the address is complete.
 * - Once the address is complete, Firestore's CORS preflight for the connection test's URL is asked now
 *   (firebase.ts, warmConnectionTest), at most once per PREFLIGHT_REFRESH_MS, so the press's connection
 *   test goes without one while the browser keeps it (docs/performance/phone/preflights.md).
 *
 * The landing page's bootstrap has already modulepreloaded the module's chunks on the first keystroke
 * (web/plugins/landing-bootstrap.ts). Returns when the module has run, when it was asked to.
 */
export function prepareSignup(addressComplete: boolean): Promise<void> | undefined {
  if (addressComplete) warmSoon();
  // A build without a site key carries neither the branch nor, with it, an early load.
  if (!import.meta.env.VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY) return undefined;
  // Settles when the module has run; the press that needs it reports any failure.
  return loadBackend().then(
    () => {},
    () => {},
  );
}

function warmSoon(): void {
  if (pendingWarm !== undefined || performance.now() - warmedAt < PREFLIGHT_REFRESH_MS) return;
  pendingWarm = setTimeout(() => {
    pendingWarm = undefined;
    warmedAt = performance.now();
    const startedBefore = signupsStarted;
    // The press's own connection test reports any failure.
    loadBackend().then(
      (backend) => (signupsStarted === startedBefore ? backend.warmConnectionTest() : undefined),
      () => {},
    );
  }, WARM_DELAY_MS);
}

/** A sign-up starts: a warm-up not yet sent is not needed, the connection test is the read. */
export function startingSignup(): void {
  signupsStarted += 1;
  clearTimeout(pendingWarm);
  pendingWarm = undefined;
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
