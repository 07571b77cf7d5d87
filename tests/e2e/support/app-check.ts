// The browser suite's App Check run (GOODY_E2E_APP_CHECK=1): the stack's site built with App Check on, the
// callables enforcing it, and each page using App Check's debug provider, as a developer's machine would.
//
// App Check has no emulator: the SDK loads reCAPTCHA Enterprise from www.google.com and exchanges its debug token
// at content-firebaseappcheck.googleapis.com, whatever the project. Here the page's requests to both are answered
// inside the browser (Playwright routes), so nothing leaves the machine: reCAPTCHA by a stand-in of the part of
// `grecaptcha.enterprise` the SDK drives (its debug provider never asks it for an attestation), the exchange with
// a token. The Functions emulator decodes an App Check token without verifying it (firebase-functions'
// skipTokenVerification), so what the run proves is what reaches the callables: a token, or none.

import type { Page } from 'playwright-core';

/** Set to 1 for the App Check run; the global setup then starts the stack with APP_CHECK_STACK_ENV. */
export const APP_CHECK_RUN_VARIABLE = 'GOODY_E2E_APP_CHECK';

/**
 * What the launcher is started with: the web build gets an App Check site key (and the web app it attests; a
 * `demo-` project takes one on the emulators, web/src/lib/config.ts), and the callables refuse a call without a
 * token (ENFORCE_APP_CHECK, through the launcher's GOODY_ENFORCE_APP_CHECK).
 */
export const APP_CHECK_STACK_ENV: Record<string, string> = {
  VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY: '6Lc-e2e-debug-provider-site-key-000000000',
  VITE_FIREBASE_API_KEY: 'demo-api-key',
  VITE_FIREBASE_APP_ID: '1:000000000000:web:0000000000000000000000',
  GOODY_ENFORCE_APP_CHECK: 'true',
};

/** The debug token the page's App Check SDK exchanges (what a developer registers in the console). */
export const DEBUG_TOKEN = '0e2e0000-d3b6-4c0f-9a57-app0check0e2e';
/** What the exchange answers: the App Check token every protected request must then carry. */
export const APP_CHECK_TOKEN = 'e2e-app-check-token';

const RECAPTCHA = 'https://www.google.com/recaptcha/';
const EXCHANGE = 'https://content-firebaseappcheck.googleapis.com/';

/** The calls of grecaptcha.enterprise the App Check SDK makes when it starts: ready, then an invisible widget. */
const RECAPTCHA_STAND_IN = `
self.grecaptcha = {
  enterprise: {
    ready: (callback) => callback(),
    render: () => 0,
    execute: () => Promise.reject(new Error('the debug provider never attests with reCAPTCHA')),
  },
};
`;

export interface AppCheckDebug {
  /** Every token exchange the page made, with the time it was made (Date.now()). */
  exchanges: Array<{ at: number; url: string; body: unknown }>;
  /** True for a request the stand-ins answer in the browser (it never leaves the machine). */
  answersHere(url: string): boolean;
}

/** Where the App Check SDK keeps its token between pages (@firebase/app-check, DB_NAME). */
const TOKEN_DATABASE = 'firebase-app-check-database';

/**
 * Turns on App Check's debug provider on `page`, before any of its scripts run, and answers for Google. Each
 * page starts as a first visit: the token an earlier page of the file's browser profile kept is dropped (an
 * open of the database waits for its deletion), so the page exchanges one of its own.
 */
export async function useAppCheckDebugProvider(page: Page): Promise<AppCheckDebug> {
  const exchanges: AppCheckDebug['exchanges'] = [];
  await page.addInitScript(
    ({ token, database }) => {
      (self as unknown as { FIREBASE_APPCHECK_DEBUG_TOKEN: string }).FIREBASE_APPCHECK_DEBUG_TOKEN = token;
      indexedDB.deleteDatabase(database);
    },
    { token: DEBUG_TOKEN, database: TOKEN_DATABASE },
  );
  await page.route(`${RECAPTCHA}**`, (route) =>
    route.fulfill({ contentType: 'text/javascript', body: RECAPTCHA_STAND_IN }),
  );
  await page.route(`${EXCHANGE}**`, (route) => {
    const request = route.request();
    const cors = {
      'access-control-allow-origin': '*',
      'access-control-allow-headers': '*',
      'access-control-allow-methods': 'POST',
    };
    if (request.method() === 'OPTIONS') return route.fulfill({ status: 204, headers: cors });
    exchanges.push({ at: Date.now(), url: request.url(), body: request.postDataJSON() });
    return route.fulfill({ status: 200, headers: cors, json: { token: APP_CHECK_TOKEN, ttl: '3600s' } });
  });
  return {
    exchanges,
    answersHere: (url) => url.startsWith(RECAPTCHA) || url.startsWith(EXCHANGE),
  };
}
