// The Firestore harness of the functions' tests: the Firebase Firestore emulator that vitest's global setup
// starts once (tests/support/firestore-emulator.setup.ts), a project of its own per harness, so test files
// running in parallel never see each other's documents. Reached with firebase-admin, never with mocks.

import { randomUUID } from 'node:crypto';
import { deleteApp, initializeApp } from 'firebase-admin/app';
import type { Firestore } from 'firebase-admin/firestore';
import { getFirestore } from 'firebase-admin/firestore';
import { inject } from 'vitest';
import type {} from '../../tests/support/firestore-emulator.setup.ts';
import { clearFirestoreEmulator, setFirestoreRules } from '../../tests/support/firestore-emulator.ts';

export const PROJECT_ID = 'demo-goody';

export interface FirestoreHarness {
  /** This harness's own project in the emulator: demo-goody-<random>. */
  projectId: string;
  /** The emulator's host:port (FIRESTORE_EMULATOR_HOST). */
  hostPort: string;
  db: Firestore;
  /** Deletes every document of this harness's project. */
  reset(): Promise<void>;
  /**
   * Loads security rules for this project, which bind every client but the Admin SDK's owner credential:
   * `refusingClient()` is such a client, to make a write fail for real.
   */
  setRules(rules: string): Promise<void>;
  /** firebase-admin's Firestore with an ordinary (non-owner) credential, so the project's rules apply to it. */
  refusingClient(): Firestore;
  stop(): Promise<void>;
}

/** Ready at once: nothing in it is asynchronous (the emulator is already running). */
export function startFirestore(): FirestoreHarness {
  const hostPort = inject('firestoreEmulatorHost');
  const projectId = `${PROJECT_ID}-${randomUUID().slice(0, 8)}`;
  const app = initializeApp({ projectId }, `functions-test-${randomUUID()}`);
  const apps = [app];
  const db = withEmulator(hostPort, () => getFirestore(app));
  return {
    projectId,
    hostPort,
    db,
    reset: () => clearFirestoreEmulator(hostPort, projectId),
    setRules: (rules) => setFirestoreRules(hostPort, projectId, rules),
    refusingClient() {
      const refusing = initializeApp({ projectId }, `functions-test-refusing-${randomUUID()}`);
      apps.push(refusing);
      // The Admin SDK sends `Authorization: Bearer owner` to an emulator, which skips the rules; an unsigned
      // token of an ordinary user does not. Set while FIRESTORE_EMULATOR_HOST still names the emulator.
      return withEmulator(hostPort, () => {
        const client = getFirestore(refusing);
        client.settings({ customHeaders: { Authorization: `Bearer ${unsignedToken('functions-test')}` } });
        return client;
      });
    },
    stop: async () => {
      await Promise.all(apps.map((each) => deleteApp(each)));
    },
  };
}

/** @google-cloud/firestore reads FIRESTORE_EMULATOR_HOST in its constructor, which getFirestore runs. */
function withEmulator<T>(hostPort: string, make: () => T): T {
  const previous = process.env.FIRESTORE_EMULATOR_HOST;
  process.env.FIRESTORE_EMULATOR_HOST = hostPort;
  try {
    return make();
  } finally {
    if (previous === undefined) delete process.env.FIRESTORE_EMULATOR_HOST;
    else process.env.FIRESTORE_EMULATOR_HOST = previous;
  }
}

/** An unsigned ID token, which the emulator accepts as a signed-in user's (what rules-unit-testing sends). */
function unsignedToken(uid: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: uid, user_id: uid, iat: now, exp: now + 3600, aud: 'demo', iss: 'https://securetoken.google.com/demo' })}.`;
}
