// Real client libraries pointed at a stand-in, for the stand-in's own tests.
import { deleteApp as deleteWebApp, initializeApp as initializeWebApp } from 'firebase/app';
import {
  connectFirestoreEmulator,
  getFirestore,
  type Firestore as LiteFirestore,
  setLogLevel,
} from 'firebase/firestore/lite';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp } from 'firebase-admin/app';
import {
  type Firestore as AdminFirestore,
  getFirestore as getAdminFirestore,
} from 'firebase-admin/firestore';
import type { FirestoreStandIn } from './index.ts';

export interface LiteClient {
  db: LiteFirestore;
  close(): Promise<void>;
}

/** firebase/firestore/lite as the web app uses it: a demo- project wired with connectFirestoreEmulator. */
export function liteClient(standIn: FirestoreStandIn, projectId: string, appName: string): LiteClient {
  const app = initializeWebApp({ projectId, apiKey: 'demo-api-key', appId: '1:1234:web:abcd' }, appName);
  const db = getFirestore(app);
  // Refused writes and retried transactions are expected here; the SDK would log each as a warning.
  setLogLevel('error');
  connectFirestoreEmulator(db, standIn.host, standIn.port);
  return { db, close: () => deleteWebApp(app) };
}

export interface AdminClient {
  db: AdminFirestore;
  close(): Promise<void>;
}

/** firebase-admin as the functions use it: FIRESTORE_EMULATOR_HOST, read when Firestore is constructed. */
export function adminClient(standIn: FirestoreStandIn, projectId: string, appName: string): AdminClient {
  const previous = process.env.FIRESTORE_EMULATOR_HOST;
  process.env.FIRESTORE_EMULATOR_HOST = standIn.hostPort;
  const app = initializeAdminApp({ projectId }, appName);
  // @google-cloud/firestore reads the variable in its constructor, which getFirestore runs.
  const db = getAdminFirestore(app);
  if (previous === undefined) delete process.env.FIRESTORE_EMULATOR_HOST;
  else process.env.FIRESTORE_EMULATOR_HOST = previous;
  return { db, close: () => deleteAdminApp(app) };
}

/** A promise with its resolve function, to make two transactions interleave deterministically. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
