import { defineConfig } from 'vitest/config';

// One `vitest run` at the root runs every package's own tests; each package keeps its own config.
export default defineConfig({
  test: {
    projects: ['web', 'functions', 'stand-ins', 'dev', 'ops', 'tests/stack', 'tests/rules'],
  },
});
