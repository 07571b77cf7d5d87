/**
 * The hand-over between the landing page's inline script and the app, for sign-ups submitted before the
 * app is there. The page paints from prerendered HTML and loads the app only when the visitor engages
 * (web/plugins/landing-bootstrap.ts), so a submit can come first. The script captures it (the browser's
 * own validation has already passed: an invalid field never fires `submit`), keeps the typed value, marks
 * the form busy, requests the app and queues the submission here; the form, once hydrated, takes its
 * queued submission and runs it through the sign-up flow exactly once.
 *
 * Both sides read and write one object on `window`, named by CAPTURE_GLOBAL:
 *
 * - the script pushes at most one pending submission per form (a second press while one is pending does
 *   nothing), and only for a form that is not `live`;
 * - the app's form calls `takeOverSignupForm`: from then on its submits are the app's (the script lets them
 *   through to React), and a submission still pending is removed and returned, so it runs once;
 * - after CAPTURE_TIMEOUT_MS without the app, the script removes its submission, makes the form usable
 *   again and writes CAPTURE_UNAVAILABLE_MESSAGE into the form's live region (CAPTURE_NOTICE_ATTRIBUTE). An
 *   app that arrives later finds nothing pending, so nothing is sent twice.
 *
 * This module is imported by the build (the script's text is made from these constants) and by the app;
 * it imports nothing at run time.
 */
// With its extension: the build's plugins and the tests workspace (Node resolution) import this file too.
import type { SignupSource } from '@goody/contract';

/** The property of `window` that holds the SignupCapture. */
export const CAPTURE_GLOBAL = '__goodySignupCapture';
/** The form attribute that names its source; the script captures only forms that have it. */
export const CAPTURE_SOURCE_ATTRIBUTE = 'data-signup-source';
/** The attribute of each form's live region, empty unless the app could not be loaded in time. */
export const CAPTURE_NOTICE_ATTRIBUTE = 'data-signup-notice';
/** How long a captured submission waits for the app before the visitor is told. */
export const CAPTURE_TIMEOUT_MS = 12_000;
/** What the visitor reads (and hears) when the app has not arrived in time; the address stays typed. */
export const CAPTURE_UNAVAILABLE_MESSAGE =
  'The page has not finished loading, so your address was not sent yet. Please check your connection and try again.';

export interface CapturedSignup {
  source: SignupSource;
  /** The field's value when the visitor submitted (the browser had validated it). */
  email: string;
}

export interface SignupCapture {
  /** Captured submissions the app has not taken yet, oldest first; at most one per source. */
  pending: CapturedSignup[];
  /** Forms the app handles itself now: the script leaves their submits alone. */
  live: SignupSource[];
}

type CaptureWindow = Window & { [CAPTURE_GLOBAL]?: SignupCapture };

/** The page's capture object, created if the script did not run (the app shell, tests). */
export function signupCapture(target: Window = window): SignupCapture {
  const holder = target as CaptureWindow;
  holder[CAPTURE_GLOBAL] ??= { pending: [], live: [] };
  return holder[CAPTURE_GLOBAL];
}

/**
 * Called by a hydrated form: marks it live and returns the submission captured for it, if any, which is
 * removed so that nothing else can run it. The returned function hands the form back (on unmount).
 */
export function takeOverSignupForm(
  source: SignupSource,
  target: Window = window,
): { captured: CapturedSignup | undefined; release: () => void } {
  const capture = signupCapture(target);
  if (!capture.live.includes(source)) capture.live.push(source);
  const index = capture.pending.findIndex((signup) => signup.source === source);
  const [captured] = index === -1 ? [] : capture.pending.splice(index, 1);
  return {
    captured,
    release: () => {
      capture.live = capture.live.filter((live) => live !== source);
    },
  };
}

/**
 * Puts the captured forms back as they were prerendered, just before hydration, so the DOM React adopts
 * is exactly the markup it rendered: no busy marks, no notice. A submission still pending is not lost:
 * the script keeps refusing a second one for that form until the form takes it over.
 */
export function restorePrerenderedForms(container: ParentNode): void {
  container.querySelectorAll<HTMLFormElement>(`form[${CAPTURE_SOURCE_ATTRIBUTE}]`).forEach((form) => {
    form.setAttribute('aria-busy', 'false');
    const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
    if (button) button.disabled = false;
    const notice = form.querySelector(`[${CAPTURE_NOTICE_ATTRIBUTE}]`);
    if (notice) notice.textContent = '';
  });
}
