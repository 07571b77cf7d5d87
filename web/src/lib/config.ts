/**
 * Firebase settings, read from Vite env once and validated. The defaults run the site against a
 * `demo-` project on the local emulators, so nobody needs a real key (or reaches a real project) by
 * accident.
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
}

export type FirebaseEnv = Partial<
  Record<
    | 'VITE_FIREBASE_PROJECT_ID'
    | 'VITE_FIREBASE_API_KEY'
    | 'VITE_FIREBASE_APP_ID'
    | 'VITE_FUNCTIONS_REGION'
    | 'VITE_USE_EMULATORS'
    | 'VITE_FIRESTORE_EMULATOR_HOST'
    | 'VITE_FUNCTIONS_EMULATOR_HOST',
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
  };
}
