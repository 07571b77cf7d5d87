/**
 * The Firebase boundary with App Check in debug mode, as a developer runs it on the Vite dev server:
 * localStorage holds a debug token registered in the console, and App Check exchanges that token
 * instead of asking reCAPTCHA. (Its own file: the SDK settles debug mode once per page.)
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { API_KEY, APP_CHECK_TOKEN, APP_ID, PROJECT, startWire, type Wire } from '@/test/appCheckWire';
import { DEBUG_TOKEN_STORAGE_KEY } from './app-check';
import type { Backend } from './backend';

const DEBUG_TOKEN = '6f1f3c52-2d8a-4c3e-9a53-3f2b8f0a7c11';

let wire: Wire;
let backend: Backend;

beforeAll(async () => {
  wire = await startWire();
  localStorage.setItem(DEBUG_TOKEN_STORAGE_KEY, DEBUG_TOKEN);
  // The SDK prints the debug token it uses, for the developer to register.
  vi.spyOn(console, 'log').mockImplementation(() => {});
  backend = await import('./firebase');
  await wire.firstExchange;
});

afterAll(async () => {
  localStorage.removeItem(DEBUG_TOKEN_STORAGE_KEY);
  await wire.stop();
});

describe('the Firebase boundary with an App Check debug token (dev server only)', () => {
  it('exchanges the debug token, not a reCAPTCHA attestation', async () => {
    await backend.sendThankYouEmail({ email: 'teen@example.com' });
    expect(wire.recaptcha.executed).toEqual([]);
    expect(wire.requests).toEqual([
      {
        method: 'POST',
        path: `/app-check/v1/projects/${PROJECT}/apps/${APP_ID}:exchangeDebugToken?key=${API_KEY}`,
        appCheckHeader: undefined,
        body: { debug_token: DEBUG_TOKEN },
      },
      {
        method: 'POST',
        path: '/api/send-thank-you-email',
        appCheckHeader: APP_CHECK_TOKEN,
        body: { data: { email: 'teen@example.com' } },
      },
    ]);
  });
});
