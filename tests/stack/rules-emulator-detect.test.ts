// tests/rules/detect.ts decides whether `npm test` runs the security-rules suite or prints why it cannot.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type DetectOptions,
  firestoreEmulatorAvailability,
  fixedEmulatorPorts,
  parseJavaMajorVersion,
} from '../rules/detect.ts';

const JAR = 'cloud-firestore-emulator-v1.22.0.jar';

let home: string;
let cacheDir: string;
let firebaseJson: string;
const servers: Server[] = [];
const children: ChildProcess[] = [];

function listen(handler: Parameters<typeof createServer>[1] = (_req, res) => res.end()): Promise<number> {
  const server = createServer(handler);
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

/**
 * An HTTP server in another process: firestoreEmulatorAvailability() blocks this one while its probe runs,
 * so a server in this process could not answer. `standIn` answers the stand-in's control API too.
 */
async function httpServerInAnotherProcess(kind: 'emulator' | 'stand-in'): Promise<number> {
  const script = `
    const standIn = ${kind === 'stand-in'};
    const server = require('node:http').createServer((req, res) => {
      const known = req.url === '/' || (standIn && req.url.startsWith('/__control/'));
      res.statusCode = known ? 200 : 404;
      res.end(known ? 'Ok' : 'Not Found');
    });
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const [chunk] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  return Number(chunk.toString().trim());
}

async function freePort(): Promise<number> {
  const port = await listen();
  const server = servers.pop();
  await new Promise((resolve) => server?.close(resolve));
  return port;
}

function writeFirebaseJson(ports: { firestore: number; hub?: number; logging?: number }): void {
  const emulators: Record<string, unknown> = { firestore: { host: '127.0.0.1', port: ports.firestore } };
  if (ports.hub) emulators.hub = { host: '127.0.0.1', port: ports.hub };
  if (ports.logging) emulators.logging = { host: '127.0.0.1', port: ports.logging };
  writeFileSync(firebaseJson, JSON.stringify({ emulators }));
}

function options(overrides: Partial<DetectOptions> = {}): DetectOptions {
  return {
    env: {},
    homeDir: home,
    firebaseJsonPath: firebaseJson,
    javaMajorVersion: () => 21,
    expectedJarName: () => JAR,
    timeoutMs: 1000,
    ...overrides,
  };
}

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'goody-detect-'));
  cacheDir = join(home, '.cache', 'firebase', 'emulators');
  mkdirSync(cacheDir, { recursive: true });
  firebaseJson = join(home, 'firebase.json');
  writeFirebaseJson({ firestore: await freePort() });
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  for (const child of children.splice(0)) child.kill();
  rmSync(home, { recursive: true, force: true });
});

describe('parseJavaMajorVersion (the parse firebase-tools applies to `java -version`)', () => {
  it.each([
    ['openjdk version "17.0.15" 2025-04-15', 17],
    ['openjdk version "21.0.2" 2024-01-16 LTS', 21],
    ['java version "1.8.0_392"', 1],
    ['bash: java: command not found', undefined],
  ])('%j -> %j', (output, major) => {
    expect(parseJavaMajorVersion(output)).toBe(major);
  });
});

describe('firestoreEmulatorAvailability', () => {
  it('says the suite can run when Java 21+ and the jar firebase-tools wants are there and the ports are free', () => {
    writeFileSync(join(cacheDir, JAR), '');
    expect(firestoreEmulatorAvailability(options())).toEqual({
      available: true,
      how: 'start',
      detail: `Java 21 and ${join(cacheDir, JAR)}`,
    });
  });

  it('names a missing Java', () => {
    writeFileSync(join(cacheDir, JAR), '');
    const result = firestoreEmulatorAvailability(options({ javaMajorVersion: () => undefined }));
    expect(result).toEqual({
      available: false,
      reason: 'no Java on PATH (the Firebase Firestore emulator needs Java 21 or later)',
    });
  });

  it('names a Java that is too old, and the missing jar, in one line', () => {
    const result = firestoreEmulatorAvailability(options({ javaMajorVersion: () => 17 }));
    expect(result.available).toBe(false);
    if (result.available) return;
    expect(result.reason).not.toContain('\n');
    expect(result.reason).toMatch(
      /^Java 17 on PATH, the Firebase Firestore emulator needs Java 21 or later; /,
    );
    expect(result.reason).toContain(`${JAR} is not in ${cacheDir}`);
  });

  it('does not take another emulator version for the one firebase-tools would run (it would try to download)', () => {
    writeFileSync(join(cacheDir, 'cloud-firestore-emulator-v1.19.7.jar'), '');
    const result = firestoreEmulatorAvailability(options());
    expect(result).toMatchObject({ available: false });
    expect(result.available ? '' : result.reason).toContain(
      '(it holds cloud-firestore-emulator-v1.19.7.jar)',
    );
  });

  it('looks where firebase-tools looks: FIREBASE_EMULATORS_PATH, then FIRESTORE_EMULATOR_BINARY_PATH', () => {
    const elsewhere = join(home, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, JAR), '');
    expect(
      firestoreEmulatorAvailability(options({ env: { FIREBASE_EMULATORS_PATH: elsewhere } })),
    ).toMatchObject({
      available: true,
    });

    const binary = join(home, 'my-emulator.jar');
    writeFileSync(binary, '');
    expect(
      firestoreEmulatorAvailability(options({ env: { FIRESTORE_EMULATOR_BINARY_PATH: binary } })),
    ).toMatchObject({ available: true, detail: `Java 21 and ${binary}` });
    expect(
      firestoreEmulatorAvailability(options({ env: { FIRESTORE_EMULATOR_BINARY_PATH: `${binary}.gone` } })),
    ).toEqual({ available: false, reason: `FIRESTORE_EMULATOR_BINARY_PATH=${binary}.gone does not exist` });
  });

  it('reads the jar name from the installed firebase-tools when not told', () => {
    const result = firestoreEmulatorAvailability(options({ expectedJarName: undefined }));
    expect(result.available ? '' : result.reason).toMatch(
      /cloud-firestore-emulator-v\d+\.\d+\.\d+\.jar is not in /,
    );
  });

  it('says which fixed port is taken (for example by npm start) instead of letting the emulator fail on it', async () => {
    writeFileSync(join(cacheDir, JAR), '');
    const busy = await listen();
    writeFirebaseJson({ firestore: busy, hub: await freePort() });
    expect(firestoreEmulatorAvailability(options())).toEqual({
      available: false,
      reason: `port ${busy} on 127.0.0.1 (the firestore port in firebase.json) is in use, for example by \`npm start\``,
    });
  });

  describe('FIRESTORE_EMULATOR_HOST', () => {
    it('accepts a running emulator there, whatever this machine has', async () => {
      const port = await httpServerInAnotherProcess('emulator');
      const host = `127.0.0.1:${port}`;
      expect(
        firestoreEmulatorAvailability(
          options({ env: { FIRESTORE_EMULATOR_HOST: host }, javaMajorVersion: () => 17 }),
        ),
      ).toEqual({
        available: true,
        how: 'external',
        detail: `the Firebase Firestore emulator answers at FIRESTORE_EMULATOR_HOST=${host}`,
      });
    });

    it('refuses the GOODY Firestore stand-in, which does not evaluate rules', async () => {
      const port = await httpServerInAnotherProcess('stand-in');
      const result = firestoreEmulatorAvailability(
        options({ env: { FIRESTORE_EMULATOR_HOST: `127.0.0.1:${port}` }, javaMajorVersion: () => 17 }),
      );
      expect(result.available ? '' : result.reason).toContain(
        `FIRESTORE_EMULATOR_HOST=127.0.0.1:${port} is the GOODY Firestore stand-in, which does not evaluate security rules`,
      );
    });

    it('falls back to starting one when nothing answers there', async () => {
      writeFileSync(join(cacheDir, JAR), '');
      const silent = await freePort();
      expect(
        firestoreEmulatorAvailability(options({ env: { FIRESTORE_EMULATOR_HOST: `127.0.0.1:${silent}` } })),
      ).toMatchObject({ available: true, how: 'start' });
      const result = firestoreEmulatorAvailability(
        options({
          env: { FIRESTORE_EMULATOR_HOST: `127.0.0.1:${silent}` },
          javaMajorVersion: () => undefined,
        }),
      );
      expect(result.available ? '' : result.reason).toContain(
        `FIRESTORE_EMULATOR_HOST=127.0.0.1:${silent} does not answer (ECONNREFUSED)`,
      );
    });
  });
});

describe('fixedEmulatorPorts', () => {
  it("reads the ports firebase-tools will not move from the repository's firebase.json", () => {
    const ports = fixedEmulatorPorts(new URL('../../firebase.json', import.meta.url).pathname);
    expect(ports).toEqual([
      { name: 'firestore', address: { host: '127.0.0.1', port: 8080 } },
      { name: 'hub', address: { host: '127.0.0.1', port: 4400 } },
      { name: 'logging', address: { host: '127.0.0.1', port: 4500 } },
    ]);
  });
});
