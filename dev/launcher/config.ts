// What `npm start` runs with: ports (each movable by a GOODY_*_PORT variable, so a second stack can run beside
// a developer's), the directories it writes, and which Firestore it asks for. Read once, validated, then passed
// around as plain data.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LauncherError } from './errors.ts';

export type PortKey =
  | 'hosting'
  | 'functions'
  | 'firestore'
  | 'mailerlite'
  | 'smtp'
  | 'smtpApi'
  | 'hub'
  | 'logging';

export interface PortSpec {
  key: PortKey;
  /** Environment variable that moves it. */
  env: string;
  defaultPort: number;
  /** Who listens there, in words a developer recognises in an error message. */
  purpose: string;
}

// firebase.json's defaults, the team's fixed ports for `npm start`. Tests and a second stack move them.
export const PORT_SPECS: readonly PortSpec[] = (
  [
    ['hosting', 'GOODY_HOSTING_PORT', 5000, 'the Hosting emulator (the site)'],
    ['functions', 'GOODY_FUNCTIONS_PORT', 5001, 'the Functions emulator (the callables)'],
    ['firestore', 'GOODY_FIRESTORE_PORT', 8080, 'Firestore'],
    ['mailerlite', 'GOODY_MAILERLITE_PORT', 3080, 'the MailerLite stand-in'],
    ['smtp', 'GOODY_SMTP_PORT', 2525, 'the SMTP outbox (SMTP)'],
    ['smtpApi', 'GOODY_SMTP_API_PORT', 8025, 'the SMTP outbox (HTTP control)'],
    ['hub', 'GOODY_HUB_PORT', 4400, 'the Firebase emulator hub'],
    ['logging', 'GOODY_LOGGING_PORT', 4500, 'the Firebase emulator logging service'],
  ] as const
).map(([key, env, defaultPort, purpose]) => ({ key, env, defaultPort, purpose }));

export type Ports = Record<PortKey, number>;

/** auto: the Firebase Firestore emulator when Java 21+ and its jar are here, else the stand-in. */
export type FirestoreMode = 'auto' | 'standin' | 'emulator';

export interface LauncherConfig {
  repoRoot: string;
  /** Every listener binds here; the tests and the site talk to loopback only. */
  host: string;
  projectId: string;
  region: string;
  ports: Ports;
  /** False for `npm run emulators`: run what is already built. */
  build: boolean;
  firestoreMode: FirestoreMode;
  /**
   * What the stand-ins keep across restarts: mail/ (one .eml per message), firestore/ and mailerlite/ (written
   * when the stack stops, loaded when it starts).
   */
  dataDir: string;
  /** Start with empty stand-ins: the data directory's mail, database and MailerLite account are removed. */
  fresh: boolean;
  /**
   * Generated, per-stack files: the firebase config with this stack's ports, the functions env files. Keyed by
   * the hosting port, which no two running stacks share, so two stacks never overwrite each other's files.
   */
  stackDir: string;
  /** The dummy key the MailerLite stand-in accepts and the functions send. */
  mailerLiteApiKey: string;
  /** How long firebase-tools may take to report its emulators ready. */
  emulatorStartTimeoutMs: number;
}

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export function parsePort(name: string, raw: string): number {
  const text = raw.trim();
  const port = Number(text);
  if (!/^\d+$/.test(text) || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new LauncherError(`${name} must be a port number between 1 and 65535, got "${raw}".`, 2);
  }
  return port;
}

export function resolvePorts(env: NodeJS.ProcessEnv): Ports {
  const ports = {} as Ports;
  for (const spec of PORT_SPECS) {
    const raw = env[spec.env];
    ports[spec.key] = raw === undefined || raw.trim() === '' ? spec.defaultPort : parsePort(spec.env, raw);
  }
  return ports;
}

function resolveFirestoreMode(raw: string | undefined): FirestoreMode {
  const mode = (raw ?? '').trim().toLowerCase() || 'auto';
  if (mode === 'auto' || mode === 'standin' || mode === 'emulator') return mode;
  throw new LauncherError(`GOODY_FIRESTORE must be auto, standin or emulator, got "${raw}".`, 2);
}

function resolveTimeout(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return 120_000;
  const ms = Number(raw);
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new LauncherError(`GOODY_EMULATOR_START_TIMEOUT_MS must be a positive number, got "${raw}".`, 2);
  }
  return ms;
}

export const USAGE = `Usage: npm start            build the site and the functions, then run the whole stack offline
       npm run emulators    the same without building (runs what web/dist and functions/lib hold)

Options (after \`npm start --\`):
  --fresh    start with empty stand-ins: forget the stored sign-ups, MailerLite account and mail
  --help     this text

The stand-ins keep their data in GOODY_DATA_DIR across restarts: the Firestore stand-in's documents and the
MailerLite stand-in's subscribers and groups are written when the stack stops, each mail when it arrives.
(The Firebase Firestore emulator, when it runs instead of the stand-in, starts empty.)

Environment:
${PORT_SPECS.map((spec) => `  ${spec.env.padEnd(26)} ${String(spec.defaultPort).padEnd(5)} ${spec.purpose}`).join('\n')}
  GOODY_FIRESTORE            auto  auto | standin | emulator (the Firebase one needs Java 21+ and its jar)
  GOODY_DATA_DIR                   what the stand-ins keep (default .dev-data): mail/, firestore/, mailerlite/
  GOODY_EMULATOR_START_TIMEOUT_MS  how long firebase-tools may take to start (default 120000)
`;

export function resolveLauncherConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  root = repoRoot,
): LauncherConfig {
  let build = true;
  let fresh = false;
  for (const arg of argv) {
    if (arg === '--no-build') build = false;
    else if (arg === '--fresh') fresh = true;
    else throw new LauncherError(`Unknown argument "${arg}".\n\n${USAGE}`, 2);
  }
  const ports = resolvePorts(env);
  const dataDir = env.GOODY_DATA_DIR?.trim()
    ? path.resolve(env.GOODY_DATA_DIR.trim())
    : path.join(root, '.dev-data');
  return {
    repoRoot: root,
    host: '127.0.0.1',
    projectId: 'demo-goody',
    region: 'us-central1',
    ports,
    build,
    firestoreMode: resolveFirestoreMode(env.GOODY_FIRESTORE),
    dataDir,
    fresh,
    // Inside the repository on purpose: firebase-tools resolves firebase-functions from the functions source
    // directory upwards, and this directory's parents lead to the repository's node_modules.
    stackDir: path.join(root, '.dev-data', `stack-${ports.hosting}`),
    mailerLiteApiKey: 'dev-mailerlite-key',
    emulatorStartTimeoutMs: resolveTimeout(env.GOODY_EMULATOR_START_TIMEOUT_MS),
  };
}
