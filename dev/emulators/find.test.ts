import { inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  emulatorEnv,
  type FindDeps,
  findGoogleEmulators,
  findJava,
  GoogleEmulatorsMissing,
  parseJavaMajor,
} from './find.ts';
import { launcherJar, launcherManifest, manifestLine } from './launcher-jar.ts';

const SDK = '/usr/lib/google-cloud-sdk/platform';
const SDK_FIRESTORE = `${SDK}/cloud-firestore-emulator/cloud-firestore-emulator.jar`;
const SDK_PUBSUB = `${SDK}/pubsub-emulator/bin/cloud-pubsub-emulator`;

/** A machine described by its files and the versions its java binaries print. */
function machine(options: {
  env?: NodeJS.ProcessEnv;
  files?: string[];
  javas?: Record<string, string>;
  jvmDirs?: string[];
  links?: Record<string, string>;
}) {
  const written = new Map<string, Buffer>();
  const files = new Set([...(options.files ?? []), ...Object.keys(options.javas ?? {})]);
  const deps: FindDeps = {
    env: { PATH: '/usr/bin', ...options.env },
    homedir: '/home/dev',
    javaVersionOf: (bin) => {
      const version = options.javas?.[bin];
      return version === undefined ? undefined : `openjdk version "${version}" 2026-04-21`;
    },
    exists: (file) => files.has(file) || written.has(file),
    list: (dir) => (dir === '/usr/lib/jvm' ? (options.jvmDirs ?? []) : []),
    realpath: (file) => options.links?.[file] ?? file,
    firebaseToolsInfo: (name) =>
      name === 'firestore'
        ? { downloadPathRelativeToCacheDir: 'cloud-firestore-emulator-v1.20.2.jar' }
        : {
            downloadPathRelativeToCacheDir: 'pubsub-emulator-0.8.37.zip',
            binaryPathRelativeToCacheDir: 'pubsub-emulator-0.8.37/pubsub-emulator/bin/cloud-pubsub-emulator',
          },
    writeGenerated: (name, content) => {
      const file = `/repo/.dev-data/emulators/${name}`;
      written.set(file, content);
      return file;
    },
  };
  return { deps, written };
}

const JAVA_17_ON_PATH = {
  files: ['/usr/bin/java'],
  links: { '/usr/bin/java': '/usr/lib/jvm/java-17-openjdk-amd64/bin/java' },
  javas: { '/usr/lib/jvm/java-17-openjdk-amd64/bin/java': '17.0.15' },
};

describe('finding Java 21 or later', () => {
  it('reads the major version as firebase-tools does', () => {
    expect(parseJavaMajor('openjdk version "25.0.3" 2026-04-21 LTS')).toBe(25);
    expect(parseJavaMajor('openjdk version "17.0.15" 2025-04-15')).toBe(17);
    expect(parseJavaMajor('java version "1.8.0_392"')).toBe(1);
    expect(parseJavaMajor('nonsense')).toBeUndefined();
  });

  it('passes over Java 17 on PATH and takes the newest JDK under /usr/lib/jvm', () => {
    const { deps } = machine({
      ...JAVA_17_ON_PATH,
      jvmDirs: ['java-17-openjdk-amd64', 'temurin-21-jre-amd64', 'temurin-25-jdk-amd64'],
      javas: {
        ...JAVA_17_ON_PATH.javas,
        '/usr/lib/jvm/temurin-21-jre-amd64/bin/java': '21.0.9',
        '/usr/lib/jvm/temurin-25-jdk-amd64/bin/java': '25.0.3',
      },
    });
    expect(findJava(deps).java).toEqual({ home: '/usr/lib/jvm/temurin-25-jdk-amd64', major: 25 });
  });

  it('takes JAVA_HOME first, then the java on PATH, when they are 21 or later', () => {
    const javas = {
      '/opt/jdk-21/bin/java': '21.0.1',
      '/usr/lib/jvm/temurin-25-jdk-amd64/bin/java': '25.0.3',
      '/usr/lib/jvm/java-22/bin/java': '22',
    };
    const both = machine({
      env: { JAVA_HOME: '/opt/jdk-21' },
      files: ['/usr/bin/java'],
      links: { '/usr/bin/java': '/usr/lib/jvm/java-22/bin/java' },
      javas,
      jvmDirs: ['temurin-25-jdk-amd64'],
    });
    expect(findJava(both.deps).java?.home).toBe('/opt/jdk-21');
    const pathOnly = machine({
      files: ['/usr/bin/java'],
      links: { '/usr/bin/java': '/usr/lib/jvm/java-22/bin/java' },
      javas,
      jvmDirs: ['temurin-25-jdk-amd64'],
    });
    expect(findJava(pathOnly.deps).java?.home).toBe('/usr/lib/jvm/java-22');
  });
});

describe('finding the emulators', () => {
  const java25 = {
    jvmDirs: ['temurin-25-jdk-amd64'],
    javas: { '/usr/lib/jvm/temurin-25-jdk-amd64/bin/java': '25.0.3' },
  };

  it("uses the Cloud SDK's Firestore jar through a launcher jar, and its Pub/Sub emulator through a wrapper", () => {
    const { deps, written } = machine({ ...java25, files: [SDK_FIRESTORE, SDK_PUBSUB] });
    const found = findGoogleEmulators(deps);
    expect(found.firestore).toBe('/repo/.dev-data/emulators/cloud-firestore-emulator-launcher.jar');
    expect(found.pubsub).toBe('/repo/.dev-data/emulators/cloud-pubsub-emulator');
    expect(written.get(found.firestore)).toEqual(
      launcherJar('com.google.cloud.datastore.emulator.firestore.CloudFirestore', [SDK_FIRESTORE]),
    );
    expect(written.get(found.pubsub)?.toString()).toContain(`exec '${SDK_PUBSUB}' "$@"`);
    expect(found.summary).toContain('Java 25');
  });

  it("prefers the overrides, then firebase-tools' own cache, to the Cloud SDK", () => {
    const cache = '/home/dev/.cache/firebase/emulators';
    const cached = machine({
      ...java25,
      files: [
        SDK_FIRESTORE,
        SDK_PUBSUB,
        `${cache}/cloud-firestore-emulator-v1.20.2.jar`,
        `${cache}/pubsub-emulator-0.8.37/pubsub-emulator/bin/cloud-pubsub-emulator`,
      ],
    });
    expect(findGoogleEmulators(cached.deps)).toMatchObject({
      firestore: `${cache}/cloud-firestore-emulator-v1.20.2.jar`,
      pubsub: `${cache}/pubsub-emulator-0.8.37/pubsub-emulator/bin/cloud-pubsub-emulator`,
    });
    expect(cached.written.size).toBe(0);

    const overridden = machine({
      ...java25,
      env: { FIRESTORE_EMULATOR_BINARY_PATH: '/x/fs.jar', PUBSUB_EMULATOR_BINARY_PATH: '/x/pubsub' },
      files: [SDK_FIRESTORE, SDK_PUBSUB, '/x/fs.jar', '/x/pubsub'],
    });
    expect(findGoogleEmulators(overridden.deps)).toMatchObject({
      firestore: '/x/fs.jar',
      pubsub: '/x/pubsub',
    });
  });

  it('says in one message what is missing and what to install, when nothing is found', () => {
    const { deps } = machine(JAVA_17_ON_PATH);
    const error = (() => {
      try {
        findGoogleEmulators(deps);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(GoogleEmulatorsMissing);
    const message = (error as Error).message;
    expect(message).toContain('no Java 21 or later (found: Java 17 (the java on PATH))');
    expect(message).toContain('the Firebase Firestore emulator is not installed');
    expect(message).toContain('the Pub/Sub emulator is not installed');
    expect(message).toContain('Temurin 21 or later');
    expect(message).toContain('npx firebase setup:emulators:firestore');
    expect(message).toContain('npx firebase setup:emulators:pubsub');
  });

  it('asks only for what a caller needs (the Firestore emulator alone for the tests)', () => {
    const { deps } = machine({ ...java25, files: [SDK_FIRESTORE] });
    expect(() => findGoogleEmulators(deps)).toThrow(/Pub\/Sub emulator is not installed/);
    expect(findGoogleEmulators(deps, ['firestore']).pubsub).toBe('');
  });

  it('names an override that points nowhere', () => {
    const { deps } = machine({ ...java25, env: { FIRESTORE_EMULATOR_BINARY_PATH: '/gone.jar' } });
    expect(() => findGoogleEmulators(deps, ['firestore'])).toThrow(
      'FIRESTORE_EMULATOR_BINARY_PATH=/gone.jar does not exist',
    );
  });

  it('puts the chosen Java first on PATH and hands firebase-tools the binaries', () => {
    const env = emulatorEnv(
      { java: { home: '/j', major: 25 }, firestore: '/f.jar', pubsub: '/p', summary: '' },
      { PATH: '/usr/bin' },
    );
    expect(env).toEqual({
      PATH: '/j/bin:/usr/bin',
      JAVA_HOME: '/j',
      FIRESTORE_EMULATOR_BINARY_PATH: '/f.jar',
      PUBSUB_EMULATOR_BINARY_PATH: '/p',
    });
  });
});

describe('the launcher jar', () => {
  it('wraps manifest lines at 72 bytes, as the jar format requires', () => {
    const line = manifestLine('Class-Path', `file://${'/a'.repeat(60)}`);
    const lines = line.split('\r\n').filter(Boolean);
    expect(lines.every((l) => Buffer.byteLength(l) <= 72)).toBe(true);
    expect(lines.slice(1).every((l) => l.startsWith(' '))).toBe(true);
    expect(lines.map((l, i) => (i === 0 ? l : l.slice(1))).join('')).toBe(
      `Class-Path: file://${'/a'.repeat(60)}`,
    );
  });

  it('is a zip whose one entry is the manifest naming the main class and the jar as a file: URL', () => {
    const jar = launcherJar('a.b.Main', ['/opt/sdk dir/x.jar']);
    expect(jar.readUInt32LE(0)).toBe(0x04034b50);
    const nameLength = jar.readUInt16LE(26);
    expect(jar.subarray(30, 30 + nameLength).toString()).toBe('META-INF/MANIFEST.MF');
    const size = jar.readUInt32LE(18);
    const method = jar.readUInt16LE(8);
    const data = jar.subarray(30 + nameLength, 30 + nameLength + size);
    const manifest = (method === 0 ? data : inflateRawSync(data)).toString();
    expect(manifest).toBe(launcherManifest('a.b.Main', ['/opt/sdk dir/x.jar']));
    expect(manifest.replace(/\r\n /g, '')).toContain('Class-Path: file:///opt/sdk%20dir/x.jar');
    // The end-of-central-directory record says one entry, and where its header is; that header is whole
    // (46 bytes and the name, ending where the record starts) and points back at the local one.
    const end = jar.length - 22;
    expect(jar.readUInt32LE(end)).toBe(0x06054b50);
    expect(jar.readUInt16LE(end + 10)).toBe(1);
    const central = jar.readUInt32LE(end + 16);
    expect(jar.readUInt32LE(central)).toBe(0x02014b50);
    expect(central + jar.readUInt32LE(end + 12)).toBe(end);
    expect(jar.subarray(central + 46, central + 46 + nameLength).toString()).toBe('META-INF/MANIFEST.MF');
    expect(jar.readUInt32LE(central + 16)).toBe(jar.readUInt32LE(14));
    expect(jar.readUInt32LE(central + 42)).toBe(0);
  });
});
