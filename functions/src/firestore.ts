import type { Firestore, Timestamp } from 'firebase-admin/firestore';

let sdk: Promise<typeof import('firebase-admin/firestore')> | undefined;
let db: Promise<Firestore> | undefined;

/**
 * firebase-admin's Firestore (and the gRPC stack under it) is the heaviest thing this codebase loads,
 * so it is imported on first use rather than when the functions load: a cold start that only
 * validates input, or only talks to MailerLite, never pays for it.
 */
export function firestoreSdk(): Promise<typeof import('firebase-admin/firestore')> {
  sdk ??= import('firebase-admin/firestore');
  return sdk;
}

/**
 * The Admin SDK's Firestore, initialised once per instance. Locally it reaches the emulator or the
 * stand-in through FIRESTORE_EMULATOR_HOST, which the Functions emulator sets.
 */
export function adminFirestore(): Promise<Firestore> {
  db ??= (async () => {
    const [{ getApps, initializeApp }, { getFirestore }] = await Promise.all([
      import('firebase-admin/app'),
      firestoreSdk(),
    ]);
    const app = getApps()[0] ?? initializeApp();
    return getFirestore(app);
  })();
  db.catch(() => {
    db = undefined;
  });
  return db;
}

/** A stored time (a Timestamp as read, or a Date as written) in ms; 0 for anything else. */
export function millisOf(value: unknown): number {
  if (value instanceof Date) return value.getTime();
  if (value && typeof (value as Timestamp).toMillis === 'function') return (value as Timestamp).toMillis();
  return 0;
}
