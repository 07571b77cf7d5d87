/**
 * Firebase settings, read from Vite env once and validated. The defaults run the site against a
 * `demo-` project on the local emulators, so nobody needs a real key (or reaches a real project) by
 * accident. The page takes them through config.ts; the Vite config's plugins (web/plugins/prerender.ts,
 * hosting-rewrites.ts) import this module itself, which imports nothing: Vite's config bundler leaves a
 * package import such as '@goody/contract' to Node, which cannot run the contract's TypeScript.
 */

export interface HostPort {
  host: string;
  port: number;
}

export interface FirebaseSettings {
  projectId: string;
  apiKey: string;
  appId: string;
  functionsRegion: string;
  /** Where to reach the emulators, or null to talk to the real Firebase project. */
  emulators: { firestore: HostPort; functions: HostPort } | null;
  /** App Check with reCAPTCHA Enterprise, or null (the default) for no App Check at all. */
  appCheck: { recaptchaEnterpriseSiteKey: string } | null;
}

export type FirebaseEnv = Partial<
  Record<
    | 'VITE_FIREBASE_PROJECT_ID'
    | 'VITE_FIREBASE_API_KEY'
    | 'VITE_FIREBASE_APP_ID'
    | 'VITE_FUNCTIONS_REGION'
    | 'VITE_USE_EMULATORS'
    | 'VITE_FIRESTORE_EMULATOR_HOST'
    | 'VITE_FUNCTIONS_EMULATOR_HOST'
    | 'VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY',
    string | undefined
  >
>;

const nonEmpty = (value: string | undefined) => (value?.trim() ? value.trim() : undefined);

export function parseHostPort(name: string, value: string): HostPort {
  const match = /^\[?([^\]\s]+?)\]?:(\d{1,5})$/.exec(value.trim());
  const port = Number(match?.[2]);
  if (!match?.[1] || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`${name} must look like host:port (for example 127.0.0.1:8080), got "${value}"`);
  }
  return { host: match[1], port };
}

function parseFlag(name: string, value: string | undefined, fallback: boolean): boolean {
  const flag = nonEmpty(value)?.toLowerCase();
  if (flag === undefined) return fallback;
  if (flag === 'true' || flag === '1') return true;
  if (flag === 'false' || flag === '0') return false;
  throw new Error(`${name} must be true or false, got "${value}"`);
}

// reCAPTCHA site keys are public identifiers of letters, digits, "-" and "_": 40 of them today, and the
// range leaves room for another format while still catching a truncated or mangled paste.
const SITE_KEY = /^[A-Za-z0-9_-]{20,100}$/;

/**
 * App Check attests the web app to a real Firebase project: the token exchange names the project, the
 * registered web app and its API key, and a `demo-` project has none of them. So a site key is only
 * accepted together with those, instead of failing quietly in the visitor's browser; with a `demo-` project
 * only on the emulators, where App Check's debug provider is the only one that can work.
 */
function readAppCheck(
  env: FirebaseEnv,
  projectId: string,
  onEmulators: boolean,
): FirebaseSettings['appCheck'] {
  const name = 'VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY';
  const siteKey = nonEmpty(env[name]);
  if (siteKey === undefined) return null;
  if (!SITE_KEY.test(siteKey)) {
    throw new Error(
      `${name} must be a reCAPTCHA Enterprise site key (letters, digits, - and _), got "${siteKey}"`,
    );
  }
  // On the emulators a demo project can still run App Check with its debug provider, whose token exchange a
  // test answers (the browser suite's App Check run, GOODY_E2E_APP_CHECK=1: tests/e2e/support/app-check.ts).
  if (projectId.startsWith('demo-') && !onEmulators) {
    throw new Error(
      `${name} needs a real Firebase project: App Check cannot issue tokens for the demo project "${projectId}". Leave it unset, or use the emulators.`,
    );
  }
  for (const required of ['VITE_FIREBASE_API_KEY', 'VITE_FIREBASE_APP_ID'] as const) {
    if (nonEmpty(env[required]) === undefined) {
      throw new Error(`${name} needs ${required}: App Check exchanges its tokens for that web app.`);
    }
  }
  return { recaptchaEnterpriseSiteKey: siteKey };
}

export function readFirebaseSettings(env: FirebaseEnv): FirebaseSettings {
  const projectId = nonEmpty(env.VITE_FIREBASE_PROJECT_ID) ?? 'demo-goody';
  const useEmulators = parseFlag('VITE_USE_EMULATORS', env.VITE_USE_EMULATORS, projectId.startsWith('demo-'));
  return {
    projectId,
    // A demo- project accepts any key; a real project must provide its public web key.
    apiKey: nonEmpty(env.VITE_FIREBASE_API_KEY) ?? 'demo-api-key',
    appId: nonEmpty(env.VITE_FIREBASE_APP_ID) ?? '1:000000000000:web:0000000000000000000000',
    functionsRegion: nonEmpty(env.VITE_FUNCTIONS_REGION) ?? 'us-central1',
    emulators: useEmulators
      ? {
          firestore: parseHostPort(
            'VITE_FIRESTORE_EMULATOR_HOST',
            nonEmpty(env.VITE_FIRESTORE_EMULATOR_HOST) ?? '127.0.0.1:8080',
          ),
          functions: parseHostPort(
            'VITE_FUNCTIONS_EMULATOR_HOST',
            nonEmpty(env.VITE_FUNCTIONS_EMULATOR_HOST) ?? '127.0.0.1:5001',
          ),
        }
      : null,
    appCheck: readAppCheck(env, projectId, useEmulators),
  };
}

/**
 * The origins a sign-up talks to besides the page's own: Firestore (the connection test and the insert) and
 * App Check's token endpoint when it is on. The two sign-up callables are on the page's own origin
 * (config.ts, SITE_CALLABLES), already connected. The landing page preconnects to these when the visitor engages
 * (web/plugins/landing-bootstrap.ts), so a phone's DNS, TCP and TLS set-up happens while the address is
 * typed, not after the press. They are the hosts the Firebase SDKs address: Firestore Lite's
 * firestore.googleapis.com, or the Firestore emulator.
 */
export function backendOrigins(settings: FirebaseSettings): string[] {
  const origin = ({ host, port }: HostPort) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const { emulators } = settings;
  const origins = emulators ? [origin(emulators.firestore)] : ['https://firestore.googleapis.com'];
  // App Check has no emulator: its token exchange always goes to Google.
  if (settings.appCheck) origins.push('https://content-firebaseappcheck.googleapis.com');
  return [...new Set(origins)];
}
