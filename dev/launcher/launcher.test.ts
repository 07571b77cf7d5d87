import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { firebaseBin, firebaseToolsEnv } from './launcher.ts';

describe('how firebase-tools is run', () => {
  it('runs the firebase-tools installed in node_modules', () => {
    expect(firebaseBin()).toMatch(/node_modules\/firebase-tools\/lib\/bin\/firebase\.js$/);
    expect(existsSync(firebaseBin())).toBe(true);
  });

  it('runs offline and non-interactive, on loopback only, pointing the functions at the Firestore stand-in', () => {
    const env = firebaseToolsEnv({ PATH: '/usr/bin', HOME: '/home/dev' }, '127.0.0.1:18080');
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/dev',
      CI: 'true',
      NO_UPDATE_NOTIFIER: '1',
      npm_config_offline: 'true',
      METADATA_SERVER_DETECTION: 'none',
      GCE_METADATA_HOST: '127.0.0.1:9',
      FIRESTORE_EMULATOR_HOST: '127.0.0.1:18080',
    });
  });

  it('inherits no emulator address from the shell, which could point the stack at another one', () => {
    const env = firebaseToolsEnv({
      FIRESTORE_EMULATOR_HOST: 'elsewhere:8080',
      FIREBASE_AUTH_EMULATOR_HOST: 'elsewhere:9099',
      FIREBASE_EMULATOR_HUB: 'elsewhere:4400',
      KEEP: 'me',
    });
    expect(env.FIRESTORE_EMULATOR_HOST).toBeUndefined();
    expect(env.FIREBASE_AUTH_EMULATOR_HOST).toBeUndefined();
    expect(env.FIREBASE_EMULATOR_HUB).toBeUndefined();
    expect(env.KEEP).toBe('me');
  });
});
