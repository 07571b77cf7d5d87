/**
 * The Firebase boundary built with an App Check site key (jsdom: the App Check SDK places reCAPTCHA's
 * invisible widget in the page). Real SDKs; reCAPTCHA Enterprise and App Check's exchange answered on
 * loopback (src/test/appCheckWire.ts). What matters is on the wire: every Firestore and callable
 * request carries the token App Check obtained for the reCAPTCHA attestation.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  API_KEY,
  APP_CHECK_TOKEN,
  APP_ID,
  DOCUMENTS,
  PROJECT,
  RECAPTCHA_ATTESTATION,
  SITE_KEY,
  startWire,
  type Wire,
} from '@/test/appCheckWire';
import type { Backend } from './backend';

let wire: Wire;
let backend: Backend;
let exchanges: Wire['requests'];

beforeAll(async () => {
  wire = await startWire();
  backend = await import('./firebase');
  // The token is fetched as App Check starts (auto-refresh), before any call needs it.
  await wire.firstExchange;
  exchanges = wire.requests.splice(0);
});

afterAll(async () => {
  await wire.stop();
});

beforeEach(() => {
  wire.requests.length = 0;
});

describe('the Firebase boundary with App Check (reCAPTCHA Enterprise)', () => {
  it('reads the site key', () => {
    expect(backend.settings.appCheck).toEqual({ recaptchaEnterpriseSiteKey: SITE_KEY });
  });

  it('attests with an invisible reCAPTCHA Enterprise widget for the configured site key', () => {
    expect(wire.recaptcha.rendered).toEqual([
      { container: expect.stringMatching(/^fire_app_check_/), sitekey: SITE_KEY, size: 'invisible' },
    ]);
    expect(wire.recaptcha.executed).toEqual([{ widgetId: 0, action: 'fire_app_check' }]);
    expect(document.getElementById(wire.recaptcha.rendered[0]?.container ?? '')).not.toBeNull();
  });

  it("exchanges the attestation for an App Check token for this project's web app, once", () => {
    expect(exchanges).toEqual([
      {
        method: 'POST',
        path: `/app-check/v1/projects/${PROJECT}/apps/${APP_ID}:exchangeRecaptchaEnterpriseToken?key=${API_KEY}`,
        appCheckHeader: undefined,
        body: { recaptcha_enterprise_token: RECAPTCHA_ATTESTATION },
      },
    ]);
  });

  it('sends the token with the connection test and the insert (Firestore Lite)', async () => {
    await backend.connectionTest();
    await backend.insertSubscription({
      email: 'teen@example.com',
      subscription_type: 'updates',
      source: 'hero_form',
    });
    expect(wire.requests.map(({ path, appCheckHeader }) => ({ path, appCheckHeader }))).toEqual([
      { path: `/v1/${DOCUMENTS}:batchGet?key=${API_KEY}`, appCheckHeader: APP_CHECK_TOKEN },
      { path: `/v1/${DOCUMENTS}:commit?key=${API_KEY}`, appCheckHeader: APP_CHECK_TOKEN },
    ]);
  });

  it("sends the token with each of the three callables: the two on the page's own origin, and the sync", async () => {
    await backend.addContactToMailerlite({ email: 'teen@example.com', source: 'hero_form' });
    await backend.sendThankYouEmail({ email: 'teen@example.com' });
    await backend.syncEmailsToMailerlite();
    expect(wire.requests.map(({ path, appCheckHeader }) => ({ path, appCheckHeader }))).toEqual(
      [
        '/api/add-contact-to-mailerlite',
        '/api/send-thank-you-email',
        `/${PROJECT}/us-central1/sync-emails-to-mailerlite`,
      ].map((path) => ({ path, appCheckHeader: APP_CHECK_TOKEN })),
    );
  });

  it('reuses the token it holds instead of attesting again for every request', () => {
    expect(wire.recaptcha.executed).toHaveLength(1);
  });
});
