// Vitest global setup: one Firebase Firestore emulator for the whole functions run, on a free loopback port.
// Each test file's harness (stack.ts, startFirestore) takes a project of its own in it. Without Java 21+ and
// the emulator this fails at once with the message that says what to install (dev/emulators/find.ts).
import type { TestProject } from 'vitest/node';
import { startFirestoreEmulator } from '../../dev/emulators/firestore.ts';

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
