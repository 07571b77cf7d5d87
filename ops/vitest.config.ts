import { defineConfig } from 'vitest/config';
import { loopbackOnlyEnv } from '../stand-ins/loopback-env.ts';

export default defineConfig({
  test: {
    name: 'ops',
    environment: 'node',
    env: { ...loopbackOnlyEnv },
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
