import { getApps, initializeApp } from 'firebase-admin/app';
import { type Firestore, getFirestore, type Timestamp } from 'firebase-admin/firestore';

let db: Firestore | undefined;

/** The Admin SDK's Firestore, once per instance (locally the emulator, by FIRESTORE_EMULATOR_HOST). */
export async function adminFirestore(): Promise<Firestore> {
  db ??= getFirestore(getApps()[0] ?? initializeApp());
  return db;
}

/** A stored time (a Timestamp as read, or a Date as written) in ms; 0 for anything else. */
export function millisOf(value: unknown): number {
  if (value instanceof Date) return value.getTime();
  if (value && typeof (value as Timestamp).toMillis === 'function') return (value as Timestamp).toMillis();
  return 0;
}
