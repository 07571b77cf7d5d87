import { defineConfig } from 'vitest/config';

// Tests sit beside the code and drive the handlers over loopback: Firestore is the Firebase Firestore
// emulator the global setup starts once (a project per test file), MailerLite and SMTP are the stand-ins in
// stand-ins/ (ephemeral ports, one set per test file), so files can run in parallel.
export default defineConfig({
  test: {
    name: 'functions',
    environment: 'node',
    include: ['src/**/*.test.ts'],
    globalSetup: ['../tests/support/firestore-emulator.setup.ts'],
    // firebase-admin's gRPC stack asks the GCE metadata server whether it runs on Google Cloud; tests
    // talk to loopback only, so it is told not to look.
    // MAILBOX_KEY_SECRET: the key the logs' address handles are made with, as in a deployed function
    // (functions/test-support/signups.ts, MAILBOX_SECRET).
    env: { METADATA_SERVER_DETECTION: 'none', MAILBOX_KEY_SECRET: 'test-mailbox-key-secret' },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
