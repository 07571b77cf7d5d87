// Vitest global setup of the suites that need a database (functions/, tests/rules/): one Firebase Firestore
// emulator for the run, on a free loopback port, handed to the tests as inject('firestoreEmulatorHost'). Each
// functions test file takes a project of its own in it (functions/test-support/firestore.ts). Without Java 21+ and
// the emulator this fails at once with the message that says what to install (dev/emulators/find.ts).
import type { TestProject } from 'vitest/node';
import { startFirestoreEmulator } from './firestore-emulator.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** host:port of the Firebase Firestore emulator the global setup started. */
    firestoreEmulatorHost: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const emulator = await startFirestoreEmulator();
  project.provide('firestoreEmulatorHost', emulator.hostPort);
  return () => emulator.stop();
}
