import { defineConfig } from 'vitest/config';
import { loopbackOnlyEnv } from './loopback-env.ts';

/** The Vitest project of a Node workspace of the lab (stand-ins/, dev/, ops/): its tests kept on loopback. */
export function labProject(name: string) {
  return defineConfig({
    test: {
      name,
      environment: 'node',
      env: { ...loopbackOnlyEnv },
      include: ['**/*.test.ts'],
      exclude: ['node_modules/**'],
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
  });
}
