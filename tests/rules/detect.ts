/**
 * Can the security-rules suite run on this machine? It needs the Firebase Firestore emulator, the only
 * thing that evaluates firestore.rules exactly as production does. Either `firebase emulators:exec` can
 * start one here (Java 21 or later on PATH, the emulator jar in firebase-tools' cache, the ports
 * firebase.json fixes are free), or FIRESTORE_EMULATOR_HOST already points to a running one.
 *
 *   const rules = firestoreEmulatorAvailability();
 *   if (!rules.available) console.log(`rules tests skipped: ${rules.reason}`);
 *
 * Synchronous on purpose (the test orchestrator calls it inline); the network probes run in a short-lived
 * child process. Run directly (`tsx tests/rules/detect.ts`) it prints one line and exits 0 when the suite
 * can run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type HostAndPort, parseHostAndPort } from './emulator-host.ts';

export type FirestoreEmulatorAvailability =
  /** `npm run test:rules` can start the emulator itself. */
  | { available: true; how: 'start'; detail: string }
  /** FIRESTORE_EMULATOR_HOST names a running emulator: run `vitest run --config tests/rules/vitest.config.ts`. */
  | { available: true; how: 'external'; detail: string }
  | { available: false; reason: string };

export interface DetectOptions {
  env?: NodeJS.ProcessEnv;
  /** The firebase.json whose emulator ports `firebase emulators:exec` will bind. */
  firebaseJsonPath?: string;
  /** Major version of the `java` on PATH, or undefined when there is none. */
  javaMajorVersion?: () => number | undefined;
  /** The jar file name firebase-tools runs, e.g. cloud-firestore-emulator-v1.22.0.jar. */
  expectedJarName?: () => string | undefined;
  homeDir?: string;
  timeoutMs?: number;
}

/** firebase-tools refuses to start a Java emulator on anything older (its MIN_SUPPORTED_JAVA_MAJOR_VERSION). */
export const MIN_JAVA_MAJOR_VERSION = 21;

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function firestoreEmulatorAvailability(options: DetectOptions = {}): FirestoreEmulatorAvailability {
  const env = options.env ?? process.env;
  const timeoutMs = options.timeoutMs ?? 3000;

  let externalProblem: string | undefined;
  const externalValue = env.FIRESTORE_EMULATOR_HOST?.trim();
  if (externalValue) {
    const problem = externalEmulatorProblem(externalValue, timeoutMs);
    if (problem === undefined) {
      return {
        available: true,
        how: 'external',
        detail: `the Firebase Firestore emulator answers at FIRESTORE_EMULATOR_HOST=${externalValue}`,
      };
    }
    externalProblem = `FIRESTORE_EMULATOR_HOST=${externalValue} ${problem}`;
  }

  const problems: string[] = [];
  const java = (options.javaMajorVersion ?? (() => javaMajorVersionOnPath(timeoutMs)))();
  if (java === undefined) {
    problems.push(
      `no Java on PATH (the Firebase Firestore emulator needs Java ${MIN_JAVA_MAJOR_VERSION} or later)`,
    );
  } else if (java < MIN_JAVA_MAJOR_VERSION) {
    problems.push(
      `Java ${java} on PATH, the Firebase Firestore emulator needs Java ${MIN_JAVA_MAJOR_VERSION} or later`,
    );
  }
  const jar = findEmulatorJar(options, env);
  if (!jar.found) problems.push(jar.problem);

  // Only worth checking once the emulator could start at all; a busy port is then the one thing in the way.
  if (problems.length === 0) {
    const firebaseJson = options.firebaseJsonPath ?? join(REPO_ROOT, 'firebase.json');
    const fixed = fixedEmulatorPorts(firebaseJson);
    const free = probe({ listen: fixed.map((entry) => entry.address), timeoutMs }).listen;
    fixed.forEach(({ name, address }, index) => {
      if (free[index] !== true) {
        problems.push(
          `port ${address.port} on ${address.host} (the ${name} port in ${basename(firebaseJson)}) is in use, ` +
            'for example by `npm start`',
        );
      }
    });
  }

  if (problems.length > 0) {
    // `firebase emulators:exec` points its command at the emulator it starts, so a dead
    // FIRESTORE_EMULATOR_HOST only matters when no emulator can be started either.
    if (externalProblem) problems.push(externalProblem);
    return { available: false, reason: problems.join('; ') };
  }
  return { available: true, how: 'start', detail: `Java ${java} and ${jar.found ? jar.path : ''}` };
}

/**
 * The GOODY Firestore stand-in (dev/firestore) is also reached through FIRESTORE_EMULATOR_HOST, but it
 * does not evaluate security rules, so a rules run against it would prove nothing. Only it answers its
 * /__control/ surface; the real emulator answers that path with an error.
 */
function externalEmulatorProblem(value: string, timeoutMs: number): string | undefined {
  let address: HostAndPort;
  try {
    address = parseHostAndPort(value, 'FIRESTORE_EMULATOR_HOST');
  } catch {
    return 'is not host:port';
  }
  const standInPath = '/__control/state';
  const [root, standIn] = probe({ get: [address, address], paths: ['/', standInPath], timeoutMs }).get;
  if (root === undefined || typeof root === 'string') return `does not answer (${root ?? 'no probe result'})`;
  if (root >= 500) return `answers HTTP ${root}`;
  if (standIn === 200) return 'is the GOODY Firestore stand-in, which does not evaluate security rules';
  return undefined;
}

type JarLookup = { found: true; path: string } | { found: false; problem: string };

/** Mirrors firebase-tools: FIRESTORE_EMULATOR_BINARY_PATH, else the versioned jar in its cache directory. */
function findEmulatorJar(options: DetectOptions, env: NodeJS.ProcessEnv): JarLookup {
  const override = env.FIRESTORE_EMULATOR_BINARY_PATH;
  if (override) {
    return existsSync(override)
      ? { found: true, path: override }
      : { found: false, problem: `FIRESTORE_EMULATOR_BINARY_PATH=${override} does not exist` };
  }
  const cacheDir =
    env.FIREBASE_EMULATORS_PATH || join(options.homeDir ?? homedir(), '.cache', 'firebase', 'emulators');
  const expected = (options.expectedJarName ?? (() => expectedJarName(env)))();
  const present = listJars(cacheDir);
  const download = '`npx firebase setup:emulators:firestore` downloads it where the internet is reachable';
  if (expected) {
    if (present.includes(expected)) return { found: true, path: join(cacheDir, expected) };
    const others = present.length > 0 ? ` (it holds ${present.join(', ')})` : '';
    return { found: false, problem: `${expected} is not in ${cacheDir}${others}; ${download}` };
  }
  const newest = present.sort().at(-1);
  if (newest) return { found: true, path: join(cacheDir, newest) };
  return { found: false, problem: `no cloud-firestore-emulator-*.jar in ${cacheDir}; ${download}` };
}

function listJars(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => /^cloud-firestore-emulator-.*\.jar$/.test(name));
  } catch {
    return [];
  }
}

/** The jar this firebase-tools version runs, from its downloadableEmulatorInfo.json. */
function expectedJarName(env: NodeJS.ProcessEnv): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const toolsRoot = dirname(require.resolve('firebase-tools/package.json'));
    const info = JSON.parse(
      readFileSync(join(toolsRoot, 'lib', 'emulator', 'downloadableEmulatorInfo.json'), 'utf8'),
    ) as { firestore?: { version?: string; downloadPathRelativeToCacheDir?: string } };
    const jar = info.firestore?.downloadPathRelativeToCacheDir;
    const version = info.firestore?.version;
    if (!jar) return undefined;
    const override = env.FIRESTORE_EMULATOR_VERSION;
    return override && version ? jar.split(version).join(override) : jar;
  } catch {
    return undefined;
  }
}

/** Same parse as firebase-tools: `java -version` prints e.g. `openjdk version "21.0.2" ...` on stderr. */
export function parseJavaMajorVersion(output: string): number | undefined {
  const match = /version "([1-9][0-9]*)/.exec(output);
  return match?.[1] === undefined ? undefined : Number.parseInt(match[1], 10);
}

function javaMajorVersionOnPath(timeoutMs: number): number | undefined {
  const result = spawnSync('java', ['-Duser.language=en', '-version'], {
    encoding: 'utf8',
    timeout: timeoutMs * 3,
  });
  if (result.error) return undefined;
  return parseJavaMajorVersion(`${result.stdout}\n${result.stderr}`);
}

interface FixedPort {
  name: string;
  address: HostAndPort;
}

/**
 * Ports firebase-tools will not move: the Firestore emulator's always, the hub's and the logging
 * emulator's when firebase.json names them. (It moves the Firestore websocket port when taken.)
 */
export function fixedEmulatorPorts(firebaseJsonPath: string): FixedPort[] {
  const config = JSON.parse(readFileSync(firebaseJsonPath, 'utf8')) as {
    emulators?: Record<string, { host?: string; port?: number | string } | undefined>;
  };
  const emulators = config.emulators ?? {};
  const firestore = emulators.firestore;
  const ports: FixedPort[] = [
    {
      name: 'firestore',
      address: { host: firestore?.host ?? '127.0.0.1', port: Number(firestore?.port ?? 8080) },
    },
  ];
  for (const name of ['hub', 'logging']) {
    const entry = emulators[name];
    if (entry?.port !== undefined) {
      ports.push({ name, address: { host: entry.host ?? '127.0.0.1', port: Number(entry.port) } });
    }
  }
  return ports;
}

interface ProbeRequest {
  listen?: HostAndPort[];
  get?: HostAndPort[];
  paths?: string[];
  timeoutMs: number;
}

interface ProbeResult {
  /** Per address: whether it could be bound. */
  listen: boolean[];
  /** Per address: the HTTP status, or the connection error's code. */
  get: Array<number | string>;
}

// Sockets are asynchronous in Node; a child process keeps firestoreEmulatorAvailability() synchronous.
const PROBE_SCRIPT = `
import { createServer } from 'node:net';
import { request } from 'node:http';
const { listen = [], get = [], paths = [], timeoutMs } = JSON.parse(process.argv[1]);
const canListen = ({ host, port }) => new Promise((resolve) => {
  const server = createServer();
  server.once('error', () => resolve(false));
  server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
});
const status = ({ host, port }, path) => new Promise((resolve) => {
  const req = request({ host, port, path, method: 'GET', timeout: timeoutMs }, (res) => {
    res.resume();
    resolve(res.statusCode ?? 0);
  });
  req.once('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'no answer within ' + timeoutMs + ' ms' })));
  req.once('error', (error) => resolve(error.code ?? error.message));
  req.end();
});
const result = {
  listen: await Promise.all(listen.map(canListen)),
  get: await Promise.all(get.map((address, i) => status(address, paths[i] ?? '/'))),
};
process.stdout.write(JSON.stringify(result));
`;

function probe(request: ProbeRequest): ProbeResult {
  const child = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', PROBE_SCRIPT, JSON.stringify(request)],
    {
      encoding: 'utf8',
      timeout: request.timeoutMs * 4,
    },
  );
  try {
    return JSON.parse(child.stdout) as ProbeResult;
  } catch {
    const why = child.error?.message ?? (child.stderr.trim() || `exit ${child.status}`);
    return {
      listen: (request.listen ?? []).map(() => false),
      get: (request.get ?? []).map(() => `probe failed: ${why}`),
    };
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const availability = firestoreEmulatorAvailability();
  if (availability.available) {
    console.log(`rules tests can run: ${availability.detail}`);
  } else {
    console.log(`rules tests skipped: ${availability.reason}`);
    process.exitCode = 1;
  }
}
