// Where Google's Java emulators are on this machine: Java 21+ (JAVA_HOME, the `java` on PATH, the newest
// under /usr/lib/jvm) and the Firestore and Pub/Sub emulators (the *_EMULATOR_BINARY_PATH overrides,
// firebase-tools' cache, a Google Cloud SDK installation). Nothing found is one clear message, never a fallback.
//
//   npx tsx dev/emulators/find.ts     prints what was found, or what to install, and exits 0 or 1

import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launcherJar } from './launcher-jar.ts';

/** firebase-tools refuses a Java emulator on anything older (MIN_SUPPORTED_JAVA_MAJOR_VERSION). */
const MIN_JAVA_MAJOR = 21;

/** Where the launcher jar and the Pub/Sub wrapper are written (git-ignored). */
const GENERATED_DIR = fileURLToPath(new URL('../../.dev-data/emulators', import.meta.url));

/** Places the Google Cloud SDK is installed by its Debian/RPM packages, its installer and Homebrew. */
const CLOUD_SDK_ROOTS = [
  '/usr/lib/google-cloud-sdk',
  '/usr/share/google-cloud-sdk',
  '/opt/google-cloud-sdk',
  '/usr/local/share/google-cloud-sdk',
  '/opt/homebrew/share/google-cloud-sdk',
];

/** `home`: the directory whose bin/java runs (JAVA_HOME for the emulators). */
export type Java = { home: string; major: number };

/** What firebase-tools runs as the Firestore emulator (`java -jar`) and the Pub/Sub one, and a line saying so. */
export type GoogleEmulators = { java: Java; firestore: string; pubsub: string; summary: string };

export class GoogleEmulatorsMissing extends Error {
  override name = 'GoogleEmulatorsMissing';
}

export interface FindDeps {
  env: NodeJS.ProcessEnv;
  homedir: string;
  /** `java -version` of that binary, or undefined when it does not run. */
  javaVersionOf(javaBin: string): string | undefined;
  exists(file: string): boolean;
  /** Directory names under a folder ([] when it does not exist). */
  list(dir: string): string[];
  realpath(file: string): string;
  /** firebase-tools' downloadableEmulatorInfo.json entry of an emulator. */
  firebaseToolsInfo(name: 'firestore' | 'pubsub'): DownloadInfo | undefined;
  /** Writes a generated file (launcher jar, wrapper script) and returns its path. */
  writeGenerated(name: string, content: Buffer, mode: number): string;
}

type DownloadInfo = { downloadPathRelativeToCacheDir: string; binaryPathRelativeToCacheDir?: string };

/** The first number after `version "`: 17 for "17.0.15", 25 for "25.0.3", 1 for "1.8.0_392". */
export function parseJavaMajor(output: string): number | undefined {
  const match = /version "([1-9][0-9]*)/.exec(output);
  return match?.[1] ? Number.parseInt(match[1], 10) : undefined;
}

function probeJava(home: string, where: string, deps: FindDeps, seen: string[]): Java | undefined {
  const bin = path.join(home, 'bin', 'java');
  if (!deps.exists(bin)) return undefined;
  const major = parseJavaMajor(deps.javaVersionOf(bin) ?? '');
  if (major !== undefined && major >= MIN_JAVA_MAJOR) return { home, major };
  seen.push(
    major === undefined ? `${where} (${bin}) did not report its version` : `Java ${major} (${where})`,
  );
  return undefined;
}

/** Where each `command` on PATH is installed: two levels above its real binary (bin/ links into it). */
function installedOnPath(deps: FindDeps, command: string): string[] {
  return (deps.env.PATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir) => path.join(dir, command))
    .filter((bin) => deps.exists(bin))
    .map((bin) => path.dirname(path.dirname(deps.realpath(bin))));
}

/** The Java to run the emulators with, and what was found and refused (for the message). */
export function findJava(deps: FindDeps): { java?: Java; seen: string[] } {
  const seen: string[] = [];
  const javaHome = deps.env.JAVA_HOME?.trim();
  if (javaHome) {
    const java = probeJava(javaHome, 'JAVA_HOME', deps, seen);
    if (java) return { java, seen };
  }
  const [onPath] = installedOnPath(deps, 'java');
  const java = onPath === undefined ? undefined : probeJava(onPath, 'the java on PATH', deps, seen);
  if (java) return { java, seen };
  const installed = deps
    .list('/usr/lib/jvm')
    .map((name) => path.join('/usr/lib/jvm', name))
    .map((home) => probeJava(home, home, deps, seen))
    .filter((java): java is Java => java !== undefined)
    .sort((a, b) => b.major - a.major);
  return { java: installed[0], seen };
}

function cloudSdkRoots(deps: FindDeps): string[] {
  const fromEnv = deps.env.CLOUDSDK_ROOT_DIR?.trim();
  const roots = [fromEnv ?? '', ...installedOnPath(deps, 'gcloud'), ...CLOUD_SDK_ROOTS];
  return [...new Set([...roots, path.join(deps.homedir, 'google-cloud-sdk')].filter(Boolean))];
}

/**
 * How each emulator is found: its override, firebase-tools' cache, or the Cloud SDK's copy, run through a launcher
 * jar (the SDK's Firestore jar has no Main-Class, and firebase-tools runs `java -jar`) or a wrapper script
 * (firebase-tools chmods what it is given, which a Pub/Sub script owned by root refuses).
 */
const EMULATORS = {
  firestore: {
    name: 'the Firebase Firestore emulator',
    override: 'FIRESTORE_EMULATOR_BINARY_PATH',
    cached: (info: DownloadInfo) => info.downloadPathRelativeToCacheDir,
    sdk: 'platform/cloud-firestore-emulator/cloud-firestore-emulator.jar',
    generated: (sdkFile: string) =>
      [
        'cloud-firestore-emulator-launcher.jar',
        launcherJar('com.google.cloud.datastore.emulator.firestore.CloudFirestore', [sdkFile]),
      ] as const,
  },
  pubsub: {
    name: 'the Pub/Sub emulator',
    override: 'PUBSUB_EMULATOR_BINARY_PATH',
    cached: (info: DownloadInfo) => info.binaryPathRelativeToCacheDir,
    sdk: 'platform/pubsub-emulator/bin/cloud-pubsub-emulator',
    generated: (sdkFile: string) =>
      [
        'cloud-pubsub-emulator',
        Buffer.from(
          `#!/bin/sh\n# Written by dev/emulators/find.ts: the Google Cloud SDK's Pub/Sub emulator.\nexec '${sdkFile.replace(/'/g, `'\\''`)}' "$@"\n`,
        ),
      ] as const,
  },
} as const;

/** What firebase-tools can run as this emulator, or why there is none. */
export function findEmulator(which: Needed, deps: FindDeps): { path?: string; problem?: string } {
  const emulator = EMULATORS[which];
  const override = deps.env[emulator.override]?.trim();
  if (override) {
    return deps.exists(override)
      ? { path: override }
      : { problem: `${emulator.override}=${override} does not exist` };
  }
  const info = deps.firebaseToolsInfo(which);
  const relative = info && emulator.cached(info);
  if (relative) {
    const cacheDir =
      deps.env.FIREBASE_EMULATORS_PATH?.trim() || path.join(deps.homedir, '.cache/firebase/emulators');
    const cached = path.join(cacheDir, relative);
    if (deps.exists(cached)) return { path: cached };
  }
  for (const root of cloudSdkRoots(deps)) {
    const sdkFile = path.join(root, emulator.sdk);
    if (!deps.exists(sdkFile)) continue;
    const [name, content] = emulator.generated(sdkFile);
    return { path: deps.writeGenerated(name, content, 0o755) };
  }
  return { problem: `${emulator.name} is not installed` };
}

export type Needed = 'firestore' | 'pubsub';

/**
 * Java 21+ and the emulators asked for, or GoogleEmulatorsMissing with one message that says what is missing
 * and what to install.
 */
export function findGoogleEmulators(deps: FindDeps = systemDeps, needed: Needed[] = ['firestore', 'pubsub']) {
  const { java, seen } = findJava(deps);
  const found = { firestore: '', pubsub: '' };
  const problems = java
    ? []
    : [`no Java ${MIN_JAVA_MAJOR} or later${seen.length > 0 ? ` (found: ${seen.join(', ')})` : ''}`];
  const remedies = java
    ? []
    : [
        `a Java ${MIN_JAVA_MAJOR}+ runtime (Eclipse Temurin 21 or later; point JAVA_HOME at it, or put it on PATH)`,
      ];
  const missing = needed.filter((which) => {
    const { path: file, problem } = findEmulator(which, deps);
    found[which] = file ?? '';
    if (problem) problems.push(problem);
    return problem !== undefined;
  });
  if (missing.length > 0) {
    remedies.push(
      `the emulators: ${missing.map((which) => `\`npx firebase setup:emulators:${which}\``).join(' and ')} where ` +
        'the internet is reachable, or the Google Cloud SDK packages google-cloud-cli-firestore-emulator ' +
        'and google-cloud-cli-pubsub-emulator',
    );
  }
  if (!java || problems.length > 0) {
    throw new GoogleEmulatorsMissing(
      `Google's Firebase emulators cannot run on this machine: ${problems.join('; ')}. Install ${remedies.join(', and ')}.`,
    );
  }
  const { firestore, pubsub } = found;
  const parts = [
    `Java ${java.major} (${java.home})`,
    firestore && `Firestore ${firestore}`,
    pubsub && `Pub/Sub ${pubsub}`,
  ];
  return { java, firestore, pubsub, summary: parts.filter(Boolean).join(', ') } satisfies GoogleEmulators;
}

/**
 * The environment firebase-tools (or a test's own Java process) runs the emulators with: the chosen Java first on
 * PATH and as JAVA_HOME, and the binaries it would otherwise download.
 */
export function emulatorEnv(
  found: GoogleEmulators,
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...base,
    JAVA_HOME: found.java.home,
    PATH: [path.join(found.java.home, 'bin'), base.PATH ?? ''].filter(Boolean).join(path.delimiter),
  };
  if (found.firestore) env.FIRESTORE_EMULATOR_BINARY_PATH = found.firestore;
  if (found.pubsub) env.PUBSUB_EMULATOR_BINARY_PATH = found.pubsub;
  return env;
}

const require = createRequire(import.meta.url);

export const systemDeps: FindDeps = {
  env: process.env,
  homedir: os.homedir(),
  javaVersionOf(javaBin) {
    const result = spawnSync(javaBin, ['-Duser.language=en', '-version'], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    if (result.error || result.status !== 0) return undefined;
    return `${result.stdout}\n${result.stderr}`;
  },
  exists: existsSync,
  list: (dir) => (existsSync(dir) ? readdirSync(dir).sort() : []),
  realpath: (file) => (existsSync(file) ? realpathSync(file) : file),
  firebaseToolsInfo: (name) =>
    require(`firebase-tools/lib/emulator/downloadableEmulatorInfo.json`)[name] as DownloadInfo | undefined,
  writeGenerated(name, content, mode) {
    const file = path.join(GENERATED_DIR, name);
    if (existsSync(file) && readFileSync(file).equals(content)) return file;
    mkdirSync(GENERATED_DIR, { recursive: true });
    // Written beside and renamed: two processes (a test run and npm start) may write it at once.
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, content, { mode });
    renameSync(temporary, file);
    return file;
  },
};

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    console.log(`Google's emulators: ${findGoogleEmulators().summary}`);
  } catch (error) {
    console.error(error instanceof GoogleEmulatorsMissing ? error.message : error);
    process.exit(1);
  }
}
