import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The security-rules suite runs against the Firebase Firestore emulator, the only thing that evaluates
// firestore.rules exactly as production does. The global setup starts one on a free loopback port (Java 21+
// and the emulator are found by dev/emulators/find.ts, which says what to install when they are absent).
export default defineConfig({
  test: {
    name: 'rules',
    root: fileURLToPath(new URL('.', import.meta.url)),
    environment: 'node',
    include: ['**/*.test.ts'],
    globalSetup: ['../support/firestore-emulator.setup.ts'],
    // One emulator; each file a project of its own in it, so files run side by side and never clear each
    // other's data.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
