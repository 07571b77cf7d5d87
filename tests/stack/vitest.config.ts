import { defineConfig } from 'vitest/config';
import { loopbackOnlyEnv } from '../../stand-ins/loopback-env.ts';

// Integration tests that span packages: they start processes and stand-ins on loopback.
export default defineConfig({
  test: {
    name: 'stack',
    environment: 'node',
    env: { ...loopbackOnlyEnv },
    include: ['**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
