// Which Firestore `npm start` runs. The Firebase Firestore emulator is the real thing (it enforces the security
// rules) but needs Java 21+ and a jar that firebase-tools downloads from the internet on first use; without
// both, asking firebase-tools for it would fail or try to download. So it is used only when both are already
// here, and the in-memory stand-in (dev/firestore) otherwise.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { FirestoreMode } from './config.ts';
import { LauncherError } from './errors.ts';

/** firebase-tools refuses Java below this (MIN_SUPPORTED_JAVA_MAJOR_VERSION in its emulator/commandUtils). */
export const MIN_JAVA_MAJOR = 21;

export interface EmulatorInfo {
  version: string;
  downloadPathRelativeToCacheDir: string;
}

export interface ProbeDeps {
  env: NodeJS.ProcessEnv;
  homedir: string;
  /** Output of `java -version` (stdout and stderr together), or an Error when java cannot run. */
  javaVersionOutput(): string | Error;
  fileExists(file: string): boolean;
  /** The Firestore entry of firebase-tools' downloadableEmulatorInfo.json. */
  firestoreEmulatorInfo(): EmulatorInfo | Error;
}

export interface FirestoreEmulatorProbe {
  available: boolean;
  /** Why it is or is not usable, in a sentence. */
  reason: string;
  javaMajor?: number;
  jarPath?: string;
}

/** Same reading as firebase-tools: the first number after `version "` (1 for "1.8.0_392", 17 for "17.0.15"). */
export function parseJavaMajorVersion(output: string): number | undefined {
  const match = /version "([1-9][0-9]*)/.exec(output);
  return match?.[1] ? Number.parseInt(match[1], 10) : undefined;
}

/** Where firebase-tools looks for the jar before it decides to download one (emulator/downloadableEmulators). */
export function firestoreJarPath(env: NodeJS.ProcessEnv, homedir: string, info: EmulatorInfo): string {
  const override = env.FIRESTORE_EMULATOR_BINARY_PATH?.trim();
  if (override) return override;
  const cacheDir =
    env.FIREBASE_EMULATORS_PATH?.trim() || path.join(homedir, '.cache', 'firebase', 'emulators');
  const versionOverride = env.FIRESTORE_EMULATOR_VERSION?.trim();
  const relative =
    versionOverride && versionOverride !== info.version
      ? info.downloadPathRelativeToCacheDir.split(info.version).join(versionOverride)
      : info.downloadPathRelativeToCacheDir;
  return path.join(cacheDir, relative);
}

export function probeFirestoreEmulator(deps: ProbeDeps): FirestoreEmulatorProbe {
  const java = deps.javaVersionOutput();
  if (java instanceof Error) {
    return { available: false, reason: `no Java found (${java.message}); it needs Java ${MIN_JAVA_MAJOR}+` };
  }
  const javaMajor = parseJavaMajorVersion(java);
  if (javaMajor === undefined) {
    return { available: false, reason: 'could not read the Java version from `java -version`' };
  }
  if (javaMajor < MIN_JAVA_MAJOR) {
    return {
      available: false,
      javaMajor,
      reason: `Java ${javaMajor} found; it needs Java ${MIN_JAVA_MAJOR}+`,
    };
  }
  const info = deps.firestoreEmulatorInfo();
  if (info instanceof Error) {
    return {
      available: false,
      javaMajor,
      reason: `cannot tell which jar firebase-tools wants (${info.message})`,
    };
  }
  const jarPath = firestoreJarPath(deps.env, deps.homedir, info);
  if (!deps.fileExists(jarPath)) {
    return {
      available: false,
      javaMajor,
      jarPath,
      reason:
        `Java ${javaMajor} found, but not the emulator jar ${jarPath} ` +
        '(`npx firebase setup:emulators:firestore` downloads it)',
    };
  }
  return { available: true, javaMajor, jarPath, reason: `Java ${javaMajor} and ${jarPath} found` };
}

const require = createRequire(import.meta.url);

export const systemProbeDeps: ProbeDeps = {
  env: process.env,
  homedir: os.homedir(),
  javaVersionOutput() {
    const result = spawnSync('java', ['-Duser.language=en', '-version'], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    if (result.error) {
      const code = (result.error as NodeJS.ErrnoException).code;
      return new Error(code === 'ENOENT' ? '`java` is not on PATH' : result.error.message);
    }
    if (result.status !== 0)
      return new Error(`\`java -version\` exited with ${result.status ?? result.signal}`);
    return `${result.stdout}\n${result.stderr}`;
  },
  fileExists: existsSync,
  firestoreEmulatorInfo() {
    try {
      const toolsDir = path.dirname(require.resolve('firebase-tools/package.json'));
      const file = path.join(toolsDir, 'lib', 'emulator', 'downloadableEmulatorInfo.json');
      const info = JSON.parse(readFileSync(file, 'utf8')) as { firestore?: EmulatorInfo };
      if (!info.firestore?.downloadPathRelativeToCacheDir || !info.firestore.version) {
        return new Error(`${file} has no firestore entry`);
      }
      return info.firestore;
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  },
};

export type FirestoreKind = 'standin' | 'emulator';

export interface FirestoreChoice {
  kind: FirestoreKind;
  /** One line for the console: which one and why. */
  explanation: string;
}

export function chooseFirestore(mode: FirestoreMode, probe: () => FirestoreEmulatorProbe): FirestoreChoice {
  if (mode === 'standin') {
    return {
      kind: 'standin',
      explanation: 'Firestore: the stand-in (dev/firestore), as GOODY_FIRESTORE=standin asks',
    };
  }
  const result = probe();
  if (result.available) {
    return { kind: 'emulator', explanation: `Firestore: the Firebase Firestore emulator (${result.reason})` };
  }
  if (mode === 'emulator') {
    throw new LauncherError(
      `GOODY_FIRESTORE=emulator asks for the Firebase Firestore emulator, but ${result.reason}.`,
      2,
    );
  }
  return {
    kind: 'standin',
    explanation: `Firestore: the stand-in (dev/firestore), since the Firebase Firestore emulator cannot run here: ${result.reason}`,
  };
}
