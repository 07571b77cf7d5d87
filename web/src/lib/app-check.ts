/**
 * App Check with reCAPTCHA Enterprise, the provider Firebase recommends for new web apps (reCAPTCHA v3
 * is kept for existing integrations only). `firebase.ts` imports this module dynamically, and only in
 * a build given VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY; every other build carries no App Check
 * code and loads nothing from Google.
 */
import type { FirebaseApp } from 'firebase/app';
import { type AppCheck, initializeAppCheck, ReCaptchaEnterpriseProvider } from 'firebase/app-check';

/** The global the App Check SDK reads, when it initialises, to run in debug mode. */
type DebugGlobal = { FIREBASE_APPCHECK_DEBUG_TOKEN?: string | boolean };

/** localStorage key a developer sets to use a debug token on the Vite dev server (never in a build). */
export const DEBUG_TOKEN_STORAGE_KEY = 'FIREBASE_APPCHECK_DEBUG_TOKEN';

/**
 * Starts App Check on `app`. Call it before Firestore or Functions send anything: from then on both
 * attach its token to every request. Tokens are fetched at once and refreshed in the background, so
 * the first sign-up does not wait for reCAPTCHA.
 */
export function startAppCheck(app: FirebaseApp, siteKey: string): AppCheck {
  // Vite replaces import.meta.env.DEV with false in a build, which drops this line from it.
  if (import.meta.env.DEV) applyDebugTokenFromStorage(globalThis.localStorage, globalThis as DebugGlobal);
  return initializeAppCheck(app, {
    provider: new ReCaptchaEnterpriseProvider(siteKey),
    isTokenAutoRefreshEnabled: true,
  });
}

/**
 * On a developer's machine reCAPTCHA does not attest localhost, so App Check offers debug tokens:
 * `localStorage.setItem('FIREBASE_APPCHECK_DEBUG_TOKEN', 'true')` makes the SDK create one and log it
 * (to register in the console), or the value is a token already registered. A global set by other
 * means wins.
 */
export function applyDebugTokenFromStorage(
  storage: Pick<Storage, 'getItem'> | undefined,
  target: DebugGlobal,
): void {
  const stored = storage?.getItem(DEBUG_TOKEN_STORAGE_KEY)?.trim();
  if (!stored || target.FIREBASE_APPCHECK_DEBUG_TOKEN !== undefined) return;
  target.FIREBASE_APPCHECK_DEBUG_TOKEN = stored === 'true' ? true : stored;
}
