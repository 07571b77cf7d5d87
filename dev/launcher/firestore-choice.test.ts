import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { LauncherError } from './errors.ts';
import {
  chooseFirestore,
  type FirestoreEmulatorProbe,
  firestoreJarPath,
  type ProbeDeps,
  parseJavaMajorVersion,
  probeFirestoreEmulator,
  systemProbeDeps,
} from './firestore-choice.ts';

const info = { version: '1.22.0', downloadPathRelativeToCacheDir: 'cloud-firestore-emulator-v1.22.0.jar' };
const defaultJar = path.join(
  '/home/dev',
  '.cache',
  'firebase',
  'emulators',
  info.downloadPathRelativeToCacheDir,
);

function deps(overrides: Partial<ProbeDeps> & { files?: string[] }): ProbeDeps {
  const files = new Set(overrides.files ?? []);
  return {
    env: {},
    homedir: '/home/dev',
    javaVersionOutput: () => 'openjdk version "21.0.4" 2024-07-16',
    fileExists: (file) => files.has(file),
    firestoreEmulatorInfo: () => info,
    ...overrides,
  };
}

describe('reading `java -version`', () => {
  it.each([
    ['openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment', 17],
    ['openjdk version "21" 2023-09-19', 21],
    ['java version "1.8.0_392"', 1],
    ['openjdk version "25-ea" 2025-09-16', 25],
  ])('%j is Java %i', (output, major) => {
    expect(parseJavaMajorVersion(output)).toBe(major);
  });

  it('gives up on output it does not know', () => {
    expect(parseJavaMajorVersion('Picked up JAVA_TOOL_OPTIONS')).toBeUndefined();
  });
});

describe('whether the Firebase Firestore emulator can run here', () => {
  it('cannot without Java', () => {
    const probe = probeFirestoreEmulator(
      deps({ javaVersionOutput: () => new Error('`java` is not on PATH') }),
    );
    expect(probe).toEqual({
      available: false,
      reason: 'no Java found (`java` is not on PATH); it needs Java 21+',
    });
  });

  it('cannot with Java 17 (this machine), even when the jar is there', () => {
    const probe = probeFirestoreEmulator(
      deps({ javaVersionOutput: () => 'openjdk version "17.0.15"', files: [defaultJar] }),
    );
    expect(probe).toEqual({ available: false, javaMajor: 17, reason: 'Java 17 found; it needs Java 21+' });
  });

  it('cannot with Java 21 but no jar, since firebase-tools would download it', () => {
    const probe = probeFirestoreEmulator(deps({}));
    expect(probe.available).toBe(false);
    expect(probe.jarPath).toBe(defaultJar);
    expect(probe.reason).toContain('npx firebase setup:emulators:firestore');
  });

  it('can with Java 21 and the jar firebase-tools expects in its cache', () => {
    expect(probeFirestoreEmulator(deps({ files: [defaultJar] }))).toEqual({
      available: true,
      javaMajor: 21,
      jarPath: defaultJar,
      reason: `Java 21 and ${defaultJar} found`,
    });
  });

  it('looks where firebase-tools looks when its variables move the jar', () => {
    expect(firestoreJarPath({ FIRESTORE_EMULATOR_BINARY_PATH: '/opt/fs.jar' }, '/home/dev', info)).toBe(
      '/opt/fs.jar',
    );
    expect(firestoreJarPath({ FIREBASE_EMULATORS_PATH: '/cache' }, '/home/dev', info)).toBe(
      '/cache/cloud-firestore-emulator-v1.22.0.jar',
    );
    expect(firestoreJarPath({ FIRESTORE_EMULATOR_VERSION: '1.19.7' }, '/home/dev', info)).toBe(
      path.join('/home/dev/.cache/firebase/emulators', 'cloud-firestore-emulator-v1.19.7.jar'),
    );
  });

  it("reads the jar's name from the installed firebase-tools", () => {
    const installed = systemProbeDeps.firestoreEmulatorInfo();
    if (installed instanceof Error) throw installed;
    expect(installed.downloadPathRelativeToCacheDir).toMatch(/^cloud-firestore-emulator-v.+\.jar$/);
    expect(installed.downloadPathRelativeToCacheDir).toContain(installed.version);
  });
});

describe('choosing the Firestore for npm start', () => {
  const unavailable: FirestoreEmulatorProbe = {
    available: false,
    reason: 'Java 17 found; it needs Java 21+',
  };
  const available: FirestoreEmulatorProbe = { available: true, reason: 'Java 21 and /x.jar found' };

  it('falls back to the stand-in and says why', () => {
    expect(chooseFirestore('auto', () => unavailable)).toEqual({
      kind: 'standin',
      explanation:
        'Firestore: the stand-in (dev/firestore), since the Firebase Firestore emulator cannot run here: ' +
        'Java 17 found; it needs Java 21+',
    });
  });

  it('prefers the Firebase emulator when it can run', () => {
    expect(chooseFirestore('auto', () => available)).toEqual({
      kind: 'emulator',
      explanation: 'Firestore: the Firebase Firestore emulator (Java 21 and /x.jar found)',
    });
  });

  it('uses the stand-in when asked, without running java', () => {
    const probe = vi.fn(() => available);
    expect(chooseFirestore('standin', probe).kind).toBe('standin');
    expect(probe).not.toHaveBeenCalled();
  });

  it('fails clearly when the Firebase emulator is demanded but cannot run', () => {
    let error: unknown;
    try {
      chooseFirestore('emulator', () => unavailable);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(LauncherError);
    expect((error as LauncherError).message).toBe(
      'GOODY_FIRESTORE=emulator asks for the Firebase Firestore emulator, but Java 17 found; it needs Java 21+.',
    );
  });
});
