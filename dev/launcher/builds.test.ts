import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  defaultBuildMismatch,
  FUNCTIONS_WATCH_ARGS,
  TSC_WATCH_DONE,
  viteDevArgs,
  viteEnv,
  webBuildArgs,
} from './builds.ts';
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
    expect(webBuildArgs('/repo/dev-stacks/stack-5000/site')).toEqual([
      'run',
      'build',
      '-w',
      'web',
      '--',
      '--outDir',
      '/repo/dev-stacks/stack-5000/site',
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

describe('npm run dev', () => {
  const scripts = (workspace: string) =>
    (
      JSON.parse(readFileSync(new URL(`../../${workspace}/package.json`, import.meta.url), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;

  it("compiles the functions with their workspace's own tsc --watch, into what the emulator loads", () => {
    expect(FUNCTIONS_WATCH_ARGS).toEqual(['run', 'build:watch', '-w', 'functions']);
    const functions = scripts('functions');
    // The same compilation as the build, watching.
    expect(functions['build:watch']).toBe(`${functions.build} --watch --preserveWatchOutput`);
    expect(scripts('web').dev).toBe('vite');
  });

  it("runs the web workspace's own dev script (vite) on this stack's host and port, failing rather than moving", () => {
    expect(viteDevArgs('127.0.0.1', 15173)).toEqual([
      'run',
      'dev',
      '-w',
      'web',
      '--',
      '--host',
      '127.0.0.1',
      '--port',
      '15173',
      '--strictPort',
    ]);
  });

  it('reads the error count of each tsc --watch compilation', () => {
    expect(TSC_WATCH_DONE.exec('10:34:16 PM - Found 0 errors. Watching for file changes.')?.[1]).toBe('0');
    expect(TSC_WATCH_DONE.exec('[10:34:16] Found 1 error. Watching for file changes.')?.[1]).toBe('1');
    expect(TSC_WATCH_DONE.exec('10:34:11 PM - Starting compilation in watch mode...')).toBeNull();
  });
});
