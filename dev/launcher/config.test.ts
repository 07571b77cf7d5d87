import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PORT_SPECS, resolveLauncherConfig, resolvePorts, stackPortKeys } from './config.ts';
import { LauncherError } from './errors.ts';

function configError(run: () => unknown): LauncherError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(LauncherError);
    return error as LauncherError;
  }
  throw new Error('expected a LauncherError');
}

describe('launcher configuration', () => {
  it("uses firebase.json's and the team's default ports when nothing is set", () => {
    expect(resolvePorts({})).toEqual({
      hosting: 5000,
      vite: 5173,
      functions: 5001,
      firestore: 8080,
      pubsub: 8085,
      tasks: 9499,
      mailerlite: 3080,
      smtp: 2525,
      smtpApi: 8025,
      hub: 4400,
      logging: 4500,
      eventarc: 9299,
      firestoreWebsocket: 9150,
    });
  });

  it('moves every port with its GOODY_*_PORT variable', () => {
    const env = Object.fromEntries(PORT_SPECS.map((spec, index) => [spec.env, String(20_000 + index)]));
    const ports = resolvePorts(env);
    PORT_SPECS.forEach((spec, index) => {
      expect(ports[spec.key]).toBe(20_000 + index);
    });
  });

  it.each(['abc', '0', '65536', '80.5', '-1'])(
    'refuses GOODY_HOSTING_PORT=%s, naming the variable',
    (value) => {
      const error = configError(() => resolvePorts({ GOODY_HOSTING_PORT: value }));
      expect(error.exitCode).toBe(2);
      expect(error.message).toBe(
        `GOODY_HOSTING_PORT must be a port number between 1 and 65535, got "${value}".`,
      );
    },
  );

  it('builds unless --no-build is given, keeps data unless --fresh is given, and refuses unknown arguments', () => {
    expect(resolveLauncherConfig([], {}, '/repo')).toMatchObject({ build: true, fresh: false });
    expect(resolveLauncherConfig(['--no-build'], {}, '/repo').build).toBe(false);
    expect(resolveLauncherConfig(['--fresh'], {}, '/repo').fresh).toBe(true);
    const error = configError(() => resolveLauncherConfig(['--bogus'], {}, '/repo'));
    expect(error.message).toContain('Unknown argument "--bogus"');
    expect(error.message).toContain('GOODY_HOSTING_PORT');
  });

  it('npm run dev (--dev): builds nothing up front, and refuses --no-build, which would mean nothing there', () => {
    expect(resolveLauncherConfig([], {}, '/repo').dev).toBe(false);
    expect(resolveLauncherConfig(['--dev'], {}, '/repo')).toMatchObject({ dev: true, build: true });
    const error = configError(() => resolveLauncherConfig(['--dev', '--no-build'], {}, '/repo'));
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain('--dev and --no-build do not go together');
  });

  it("listens on Hosting's port or Vite's, never both", () => {
    expect(stackPortKeys(false)).toContain('hosting');
    expect(stackPortKeys(false)).not.toContain('vite');
    expect(stackPortKeys(true)).toContain('vite');
    expect(stackPortKeys(true)).not.toContain('hosting');
    expect(stackPortKeys(true)).toHaveLength(PORT_SPECS.length - 1);
  });

  it("keeps generated files per stack, keyed by the page's port, inside the repository but out of any dot-directory", () => {
    const config = resolveLauncherConfig([], { GOODY_HOSTING_PORT: '5100' }, '/repo');
    expect(config.stackDir).toBe(path.join('/repo', 'dev-stacks', 'stack-5100'));
    // The Functions emulator's watcher ignores any path with a dot-segment (stack-files.ts).
    expect(config.stackDir).not.toMatch(/(^|[/\\])\./);
    const dev = resolveLauncherConfig(
      ['--dev'],
      { GOODY_HOSTING_PORT: '5100', GOODY_VITE_PORT: '5200' },
      '/repo',
    );
    expect(dev.stackDir).toBe(path.join('/repo', 'dev-stacks', 'stack-5200'));
    expect(config.dataDir).toBe(path.join('/repo', '.dev-data'));
    expect(resolveLauncherConfig([], { GOODY_DATA_DIR: '/tmp/data' }, '/repo').dataDir).toBe('/tmp/data');
  });
});
