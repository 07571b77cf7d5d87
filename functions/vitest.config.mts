import { defineConfig } from 'vitest/config';

// Tests sit beside the code and drive the handlers against the stand-ins in dev/ over loopback
// (ephemeral ports, one set of stand-ins per test file), so files can run in parallel.
export default defineConfig({
  test: {
    name: 'functions',
    environment: 'node',
    include: ['src/**/*.test.ts'],
    // firebase-admin's gRPC stack asks the GCE metadata server whether it runs on Google Cloud; tests
    // talk to loopback only, so it is told not to look.
    env: { METADATA_SERVER_DETECTION: 'none' },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
