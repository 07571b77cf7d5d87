import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The security-rules suite needs the Firebase Firestore emulator (Java 21+), so it is not in the root
// projects list: `npm run test:rules` starts the emulator with `firebase emulators:exec`, which sets
// FIRESTORE_EMULATOR_HOST, and runs this config. Failing here, before any test, names the cause at once.
if (!process.env.FIRESTORE_EMULATOR_HOST) {
  throw new Error(
    'FIRESTORE_EMULATOR_HOST is not set: run the rules tests with `npm run test:rules` ' +
      '(or point FIRESTORE_EMULATOR_HOST at a running Firebase Firestore emulator).',
  );
}

export default defineConfig({
  test: {
    name: 'rules',
    root: fileURLToPath(new URL('.', import.meta.url)),
    environment: 'node',
    include: ['**/*.test.ts'],
    // One emulator, one database: files must not clear each other's data.
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
