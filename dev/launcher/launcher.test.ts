import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GoogleEmulators } from '../emulators/find.ts';
import { functionsOverrides } from './config.ts';
import { LauncherError } from './errors.ts';
import { FUNCTIONS_REQUESTS_HELD, firebaseBin, firebaseToolsEnv, persistenceArgs } from './launcher.ts';

const FOUND: GoogleEmulators = {
  java: { home: '/opt/jdk-25', major: 25 },
  firestore: '/cache/firestore.jar',
  pubsub: '/cache/pubsub/bin/cloud-pubsub-emulator',
  summary: '',
};

describe('how firebase-tools is run', () => {
  it('runs the firebase-tools installed in node_modules', () => {
    expect(firebaseBin()).toMatch(/node_modules\/firebase-tools\/lib\/bin\/firebase\.js$/);
    expect(existsSync(firebaseBin())).toBe(true);
  });

  it('runs offline and non-interactive, on loopback only, with the Java and the emulators found on disk', () => {
    const env = firebaseToolsEnv({ PATH: '/usr/bin', HOME: '/home/dev' }, FOUND);
    expect(env).toEqual({
      PATH: '/opt/jdk-25/bin:/usr/bin',
      JAVA_HOME: '/opt/jdk-25',
      FIRESTORE_EMULATOR_BINARY_PATH: '/cache/firestore.jar',
      PUBSUB_EMULATOR_BINARY_PATH: '/cache/pubsub/bin/cloud-pubsub-emulator',
      HOME: '/home/dev',
      CI: 'true',
      NO_UPDATE_NOTIFIER: '1',
      npm_config_offline: 'true',
      METADATA_SERVER_DETECTION: 'none',
      GCE_METADATA_HOST: '127.0.0.1:9',
      FUNCTIONS_EMULATOR_PARALLEL: String(FUNCTIONS_REQUESTS_HELD),
    });
  });

  it("lets the Functions emulator's work queue hold every request (the pool bounds the processes), unless the shell sets it", () => {
    expect(firebaseToolsEnv({}, FOUND).FUNCTIONS_EMULATOR_PARALLEL).toBe(String(FUNCTIONS_REQUESTS_HELD));
    expect(firebaseToolsEnv({ FUNCTIONS_EMULATOR_PARALLEL: '3' }, FOUND).FUNCTIONS_EMULATOR_PARALLEL).toBe(
      '3',
    );
  });

  it('inherits no emulator address from the shell, which could point the stack at another one', () => {
    const env = firebaseToolsEnv(
      {
        FIRESTORE_EMULATOR_HOST: 'elsewhere:8080',
        FIREBASE_AUTH_EMULATOR_HOST: 'elsewhere:9099',
        FIREBASE_EMULATOR_HUB: 'elsewhere:4400',
        KEEP: 'me',
      },
      FOUND,
    );
    expect(env.FIRESTORE_EMULATOR_HOST).toBeUndefined();
    expect(env.FIREBASE_AUTH_EMULATOR_HOST).toBeUndefined();
    expect(env.FIREBASE_EMULATOR_HUB).toBeUndefined();
    expect(env.KEEP).toBe('me');
  });

  it('imports the Firestore data the last stop exported, and exports it again on exit', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'goody-export-'));
    expect(persistenceArgs(dir)).toEqual([`--export-on-exit=${dir}`]);
    writeFileSync(path.join(dir, 'firebase-export-metadata.json'), '{}');
    expect(persistenceArgs(dir)).toEqual([`--import=${dir}`, `--export-on-exit=${dir}`]);
    rmSync(dir, { recursive: true });
  });

  it("passes a benchmark's queue rates to the functions, and refuses one that is not a positive number", () => {
    expect(functionsOverrides({})).toEqual({});
    expect(
      functionsOverrides({ GOODY_MAILERLITE_TASKS_PER_MINUTE: '1100', GOODY_MAIL_TASKS_PER_SECOND: '50' }),
    ).toEqual({
      MAILERLITE_TASKS_PER_MINUTE: '1100',
      MAIL_TASKS_PER_SECOND: '50',
    });
    expect(() => functionsOverrides({ GOODY_MAIL_TASKS_PER_SECOND: 'fast' })).toThrow(LauncherError);
    expect(functionsOverrides({ GOODY_MAIL_PER_HOUR: '20' })).toEqual({ MAIL_PER_HOUR: '20' });
    expect(() => functionsOverrides({ GOODY_MAIL_PER_HOUR: '2.5' })).toThrow(LauncherError);
    expect(() => functionsOverrides({ GOODY_MAIL_PER_HOUR: '0' })).toThrow(LauncherError);
    expect(functionsOverrides({ GOODY_SYNC_MIN_INTERVAL_SECONDS: '0' })).toEqual({
      SYNC_MIN_INTERVAL_SECONDS: '0',
    });
  });
});
