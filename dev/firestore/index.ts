// The Firestore stand-in: one in-memory engine serving the REST API (firebase/firestore/lite) and the
// gRPC API (firebase-admin) on one port, for machines without the Firebase Firestore emulator.
export type { StatusName } from './errors.ts';
export type { FaultState, Faults, UnavailableMode, WriteRejection } from './faults.ts';
export {
  type DocumentDump,
  type FirestoreStandIn,
  type FirestoreStandInOptions,
  startFirestoreStandIn,
} from './server.ts';
