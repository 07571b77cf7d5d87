import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { loopbackOnlyEnv } from '../../stand-ins/loopback-env.ts';

// The browser suite: Chromium against one whole stack started by the global setup. Not in the root projects
// list (it needs a Chromium and takes minutes); `npm test` runs it with CHROMIUM_PATH set, or say why not.
export default defineConfig({
  test: {
    name: 'e2e',
    root: fileURLToPath(new URL('.', import.meta.url)),
    environment: 'node',
    env: { ...loopbackOnlyEnv },
    include: ['**/*.test.ts'],
    globalSetup: ['./global-setup.ts'],
    // The cases share the stack and reset it between them: one at a time.
    fileParallelism: false,
    sequence: { concurrent: false },
    testTimeout: 120_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
  },
});
