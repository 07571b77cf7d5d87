import { defineConfig } from 'vitest/config';
import { loopbackOnlyEnv } from './loopback-env.ts';

export default defineConfig({
  test: {
    name: 'stand-ins',
    environment: 'node',
    env: { ...loopbackOnlyEnv },
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
