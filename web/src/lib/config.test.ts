import { describe, expect, it } from 'vitest';
import { backendOrigins, callablePath, parseHostPort, readFirebaseSettings, SITE_CALLABLES } from './config';

describe('readFirebaseSettings', () => {
  it('defaults to the demo-goody project on the local emulators, so no key or real project is needed', () => {
    expect(readFirebaseSettings({})).toEqual({
      projectId: 'demo-goody',
      apiKey: 'demo-api-key',
      appId: expect.any(String),
      functionsRegion: 'us-central1',
      emulators: {
        firestore: { host: '127.0.0.1', port: 8080 },
        functions: { host: '127.0.0.1', port: 5001 },
      },
      appCheck: null,
    });
  });

  it('talks to the real services for a project that is not a demo- project', () => {
    const settings = readFirebaseSettings({
      VITE_FIREBASE_PROJECT_ID: 'goody-prod',
      VITE_FIREBASE_API_KEY: 'public-web-key',
      VITE_FIREBASE_APP_ID: '1:42:web:abc',
      VITE_FUNCTIONS_REGION: 'europe-west1',
    });
    expect(settings).toEqual({
      projectId: 'goody-prod',
      apiKey: 'public-web-key',
      appId: '1:42:web:abc',
      functionsRegion: 'europe-west1',
      emulators: null,
      appCheck: null,
    });
  });

  it('lets VITE_USE_EMULATORS override the default either way, with custom emulator hosts', () => {
    expect(
      readFirebaseSettings({
        VITE_FIREBASE_PROJECT_ID: 'goody-staging',
        VITE_USE_EMULATORS: 'true',
        VITE_FIRESTORE_EMULATOR_HOST: 'localhost:9090',
        VITE_FUNCTIONS_EMULATOR_HOST: '127.0.0.1:6001',
      }).emulators,
    ).toEqual({ firestore: { host: 'localhost', port: 9090 }, functions: { host: '127.0.0.1', port: 6001 } });
    expect(readFirebaseSettings({ VITE_USE_EMULATORS: 'false' }).emulators).toBeNull();
  });

  it('treats blank variables as unset', () => {
    expect(readFirebaseSettings({ VITE_FIREBASE_PROJECT_ID: '  ', VITE_USE_EMULATORS: '' }).projectId).toBe(
      'demo-goody',
    );
  });

  it('refuses settings it cannot understand instead of guessing', () => {
    expect(() => readFirebaseSettings({ VITE_USE_EMULATORS: 'yes' })).toThrow(
      /VITE_USE_EMULATORS must be true or false/,
    );
    expect(() => readFirebaseSettings({ VITE_FIRESTORE_EMULATOR_HOST: '127.0.0.1' })).toThrow(
      /VITE_FIRESTORE_EMULATOR_HOST must look like host:port/,
    );
  });
});

describe('App Check settings', () => {
  const REAL_PROJECT = {
    VITE_FIREBASE_PROJECT_ID: 'goody-prod',
    VITE_FIREBASE_API_KEY: 'public-web-key',
    VITE_FIREBASE_APP_ID: '1:42:web:abc',
  };
  const SITE_KEY = '6LdAbCdEfGhIjKlMnOpQrStUvWxYz-0123456_89';

  it('is off unless a reCAPTCHA Enterprise site key is given (blank counts as unset)', () => {
    expect(readFirebaseSettings(REAL_PROJECT).appCheck).toBeNull();
    expect(
      readFirebaseSettings({ ...REAL_PROJECT, VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY: '  ' }).appCheck,
    ).toBeNull();
  });

  it('is on with the site key, trimmed, for a real project', () => {
    expect(
      readFirebaseSettings({ ...REAL_PROJECT, VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY: ` ${SITE_KEY}\n` })
        .appCheck,
    ).toEqual({ recaptchaEnterpriseSiteKey: SITE_KEY });
  });

  it('refuses something that is not a site key', () => {
    for (const bad of [
      '"6LdAbCdEfGhIjKlMnOpQrStUvWxYz0123456789"',
      '6Ld abc def ghi jkl mno pqr stu vwx',
      'short',
    ]) {
      expect(() =>
        readFirebaseSettings({ ...REAL_PROJECT, VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY: bad }),
      ).toThrow(/VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY must be a reCAPTCHA Enterprise site key/);
    }
  });

  it('refuses a site key for a demo- project off the emulators, which App Check cannot serve', () => {
    expect(() =>
      readFirebaseSettings({
        VITE_USE_EMULATORS: 'false',
        VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY: SITE_KEY,
      }),
    ).toThrow(
      /needs a real Firebase project: App Check cannot issue tokens for the demo project "demo-goody"/,
    );
  });

  it("takes one for a demo- project on the emulators, where only App Check's debug provider can work", () => {
    const onTheStack = {
      VITE_FIREBASE_API_KEY: 'demo-api-key',
      VITE_FIREBASE_APP_ID: '1:000000000000:web:0000000000000000000000',
      VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY: SITE_KEY,
    };
    expect(readFirebaseSettings(onTheStack)).toMatchObject({
      projectId: 'demo-goody',
      emulators: expect.any(Object),
      appCheck: { recaptchaEnterpriseSiteKey: SITE_KEY },
    });
    // Still only with the web app it attests.
    expect(() => readFirebaseSettings({ VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY: SITE_KEY })).toThrow(
      'VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY needs VITE_FIREBASE_API_KEY',
    );
  });

  it('refuses a site key without the web app it attests (API key and app id)', () => {
    for (const missing of ['VITE_FIREBASE_API_KEY', 'VITE_FIREBASE_APP_ID'] as const) {
      expect(() =>
        readFirebaseSettings({
          ...REAL_PROJECT,
          [missing]: undefined,
          VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY: SITE_KEY,
        }),
      ).toThrow(`VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY needs ${missing}`);
    }
  });
});

describe('parseHostPort', () => {
  it('reads host:port, including a bracketed IPv6 host', () => {
    expect(parseHostPort('X', '127.0.0.1:8080')).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(parseHostPort('X', '[::1]:5001')).toEqual({ host: '::1', port: 5001 });
  });

  it('rejects ports outside 1..65535', () => {
    expect(() => parseHostPort('X', 'localhost:0')).toThrow();
    expect(() => parseHostPort('X', 'localhost:70000')).toThrow();
  });
});

describe('backendOrigins', () => {
  it("names the Firestore emulator on the local stack, not the Functions emulator: the sign-up's callables are on the page's origin", () => {
    expect(backendOrigins(readFirebaseSettings({}))).toEqual(['http://127.0.0.1:8080']);
    expect(backendOrigins(readFirebaseSettings({ VITE_FIRESTORE_EMULATOR_HOST: '[::1]:9090' }))).toEqual([
      'http://[::1]:9090',
    ]);
  });

  it("names Firestore for a real project, and App Check's exchange when on; never the functions' host", () => {
    const real = {
      VITE_FIREBASE_PROJECT_ID: 'goody-prod',
      VITE_FIREBASE_API_KEY: 'public-web-key',
      VITE_FIREBASE_APP_ID: '1:42:web:abc',
      VITE_FUNCTIONS_REGION: 'europe-west1',
    };
    expect(backendOrigins(readFirebaseSettings(real))).toEqual(['https://firestore.googleapis.com']);
    expect(
      backendOrigins(
        readFirebaseSettings({
          ...real,
          VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY: '6LdAbCdEfGhIjKlMnOpQrStUvWxYz-0123456_89',
        }),
      ),
    ).toEqual(['https://firestore.googleapis.com', 'https://content-firebaseappcheck.googleapis.com']);
  });
});

describe("the callables on the page's own origin", () => {
  it('are the two sign-up callables, each at /api/<name>; the sync is not among them (Hosting ends a rewrite at 60 s)', () => {
    expect(SITE_CALLABLES.map(callablePath)).toEqual([
      '/api/add-contact-to-mailerlite',
      '/api/send-thank-you-email',
    ]);
    expect(SITE_CALLABLES).not.toContain('sync-emails-to-mailerlite');
  });
});
