import { describe, expect, it } from 'vitest';
import { defaultBuildMismatch, viteEnv, webBuildArgs } from './builds.ts';
import { resolveLauncherConfig } from './config.ts';

describe('the web build for a stack', () => {
  it('tells the site where this stack’s emulators listen', () => {
    const config = resolveLauncherConfig(
      [],
      { GOODY_FIRESTORE_PORT: '18080', GOODY_FUNCTIONS_PORT: '15001' },
      '/repo',
    );
    expect(viteEnv(config)).toEqual({
      VITE_FIREBASE_PROJECT_ID: 'demo-goody',
      VITE_USE_EMULATORS: 'true',
      VITE_FUNCTIONS_REGION: 'us-central1',
      VITE_FIRESTORE_EMULATOR_HOST: '127.0.0.1:18080',
      VITE_FUNCTIONS_EMULATOR_HOST: '127.0.0.1:15001',
    });
  });

  it('builds through the web workspace’s own script, into the stack’s directory', () => {
    expect(webBuildArgs('/repo/.dev-data/stack-5000/site')).toEqual([
      'run',
      'build',
      '-w',
      'web',
      '--',
      '--outDir',
      '/repo/.dev-data/stack-5000/site',
      '--emptyOutDir',
    ]);
  });

  it('warns `npm run emulators` when web/dist cannot reach this stack', () => {
    expect(defaultBuildMismatch(viteEnv(resolveLauncherConfig([], {}, '/repo')))).toBeUndefined();
    const moved = viteEnv(resolveLauncherConfig([], { GOODY_FUNCTIONS_PORT: '15001' }, '/repo'));
    expect(defaultBuildMismatch(moved)).toBe(
      "web/dist talks to the default emulator addresses (127.0.0.1:5001), not this stack's (127.0.0.1:15001), so " +
        'its sign-ups will not reach this stack. Use `npm start`, which builds the site for the ports in use.',
    );
  });
});
