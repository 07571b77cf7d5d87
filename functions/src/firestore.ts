import type { Firestore, Timestamp } from 'firebase-admin/firestore';

let sdk: Promise<typeof import('firebase-admin/firestore')> | undefined;
let db: Promise<Firestore> | undefined;

/** Imported on first use: the heaviest load here, which a cold start that never reads the database skips. */
export function firestoreSdk(): Promise<typeof import('firebase-admin/firestore')> {
  sdk ??= import('firebase-admin/firestore');
  return sdk;
}

/** The Admin SDK's Firestore, once per instance (locally the emulator, by FIRESTORE_EMULATOR_HOST). */
export function adminFirestore(): Promise<Firestore> {
  db ??= (async () => {
    const [{ getApps, initializeApp }, { getFirestore }] = await Promise.all([
      import('firebase-admin/app'),
      firestoreSdk(),
    ]);
    return getFirestore(getApps()[0] ?? initializeApp());
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
