// What `npm start` (and `npm run dev`) runs with: ports (each movable by a GOODY_*_PORT variable, so a second
// stack can run beside a developer's), the directories it writes, the functions' overrides. Read once, validated.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stackDirFor } from '../stack.ts';
import { LauncherError } from './errors.ts';
import { parseScheduleOverrides, type Schedule } from './scheduler.ts';

// firebase.json's defaults, the team's fixed ports for `npm start`. Tests and a second stack move them, each
// by its variable; the purpose is who listens there, in words a developer recognises in an error message.
const PORT_TABLE = [
  ['hosting', 'GOODY_HOSTING_PORT', 5000, 'the Hosting emulator (the site)'],
  // npm run dev only, instead of Hosting: the port of Vite's own template.
  ['vite', 'GOODY_VITE_PORT', 5173, "Vite's dev server (the site, npm run dev)"],
  ['functions', 'GOODY_FUNCTIONS_PORT', 5001, 'the Functions emulator (the callables)'],
  ['firestore', 'GOODY_FIRESTORE_PORT', 8080, 'the Firestore emulator'],
  ['pubsub', 'GOODY_PUBSUB_PORT', 8085, 'the Pub/Sub emulator (the scheduled functions)'],
  ['tasks', 'GOODY_TASKS_PORT', 9499, 'the Cloud Tasks emulator (the task queues)'],
  ['mailerlite', 'GOODY_MAILERLITE_PORT', 3080, 'the MailerLite stand-in'],
  ['smtp', 'GOODY_SMTP_PORT', 2525, 'the SMTP outbox (SMTP)'],
  ['smtpApi', 'GOODY_SMTP_API_PORT', 8025, 'the SMTP outbox (HTTP control)'],
  ['hub', 'GOODY_HUB_PORT', 4400, 'the Firebase emulator hub'],
  ['logging', 'GOODY_LOGGING_PORT', 4500, 'the Firebase emulator logging service'],
  // Two that firebase-tools would otherwise pick itself, when it starts, from its defaults up: two stacks
  // starting at the same moment could pick the same one, and the second then failed to start.
  [
    'eventarc',
    'GOODY_EVENTARC_PORT',
    9299,
    'the Eventarc emulator (firebase-tools starts it with the functions)',
  ],
  ['firestoreWebsocket', 'GOODY_FIRESTORE_WEBSOCKET_PORT', 9150, "the Firestore emulator's websocket"],
] as const;

export type PortKey = (typeof PORT_TABLE)[number][0];
export const PORT_SPECS = PORT_TABLE.map(([key, env, defaultPort, purpose]) => ({
  key,
  env,
  defaultPort,
  purpose,
}));

export type Ports = Record<PortKey, number>;

/** The ports a stack listens on: every one but the other site server's (Vite's under `npm run dev`, else Hosting's). */
export function stackPortKeys(dev: boolean): PortKey[] {
  return PORT_SPECS.map((spec) => spec.key).filter((key) => key !== (dev ? 'hosting' : 'vite'));
}

export interface LauncherConfig {
  repoRoot: string;
  /** Every listener binds here; the tests and the site talk to loopback only. */
  host: string;
  projectId: string;
  region: string;
  ports: Ports;
  /** False for `npm run emulators`: run what is already built. */
  build: boolean;
  /** `npm run dev`: the page on Vite's dev server, the functions compiled by `tsc --watch` and reloaded. */
  dev: boolean;
  /** What survives a restart: firestore-export/, mailerlite/ and mail/ (stand-ins.ts). */
  dataDir: string;
  /** Start empty: the data directory's mail, database export and MailerLite account are removed. */
  fresh: boolean;
  /** Generated, per-stack files (stack-files.ts), keyed by the page's port, which no two running stacks share. */
  stackDir: string;
  /** The dummy key the MailerLite stand-in accepts and the functions send. */
  mailerLiteApiKey: string;
  /** How long firebase-tools may take to report its emulators ready. */
  emulatorStartTimeoutMs: number;
  /** The functions' pace overrides a benchmark or a test suite sets (functionsOverrides below). */
  functionsOverrides: Record<string, string>;
  /** GOODY_SCHEDULES: scheduled functions fired locally on a schedule of their own (scheduler.ts). */
  scheduleOverrides: Map<string, Schedule>;
}

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export function resolvePorts(env: NodeJS.ProcessEnv): Ports {
  const ports = {} as Ports;
  for (const { key, env: name, defaultPort } of PORT_SPECS) {
    const text = env[name]?.trim() || String(defaultPort);
    ports[key] = Number(text);
    if (!/^\d+$/.test(text) || ports[key] < 1 || ports[key] > 65535) {
      throw new LauncherError(`${name} must be a port number between 1 and 65535, got "${env[name]}".`, 2);
    }
  }
  return ports;
}

/** What a setting must be: undefined when `raw` is that, else its description for the error. */
type Rule = (raw: string) => string | undefined;
const whole =
  (least: number): Rule =>
  (raw) =>
    /^[0-9]+$/.test(raw) && Number(raw) >= least ? undefined : `a whole number, at least ${least}`;
const positive: Rule = (raw) => (Number(raw) > 0 ? undefined : 'a positive number');

/**
 * What a benchmark or a test suite may change in the functions' pace, retries and App Check (each in USAGE
 * below), handed to the functions without the GOODY_ prefix. Unset, the functions keep their defaults.
 */
const OVERRIDES: Record<string, Rule> = {
  MAIL_PER_HOUR: whole(1),
  SYNC_MIN_INTERVAL_SECONDS: whole(0),
  MAILERLITE_TASKS_PER_MINUTE: positive,
  MAIL_TASKS_PER_SECOND: positive,
  DELIVERY_MAX_ATTEMPTS: positive,
  DELIVERY_MAX_RETRY_SECONDS: positive,
  DELIVERY_MIN_BACKOFF_SECONDS: positive,
  DELIVERY_QUEUE_WAIT_SECONDS: positive,
  DELIVERY_CONFIRM_SECONDS: positive,
  MAIL_BUDGET_WINDOW_SECONDS: positive,
  ENFORCE_APP_CHECK: (raw) => (raw === 'true' || raw === 'false' ? undefined : 'true or false'),
};

function checked(name: string, raw: string, rule: Rule): string {
  const wanted = rule(raw);
  if (wanted) throw new LauncherError(`${name} must be ${wanted}, got "${raw}".`, 2);
  return raw;
}

export function functionsOverrides(env: NodeJS.ProcessEnv): Record<string, string> {
  const overrides: Record<string, string> = {};
  for (const [name, rule] of Object.entries(OVERRIDES)) {
    const raw = env[`GOODY_${name}`]?.trim();
    if (raw) overrides[name] = checked(`GOODY_${name}`, raw, rule);
  }
  return overrides;
}

export const USAGE = `Usage: npm start            build the site and the functions, then run the whole stack offline
       npm run emulators    the same without building (runs what web/dist and functions/lib hold)
       npm run dev          the same stack with the page on Vite's dev server (hot module replacement) and the
                            functions rebuilt on save (tsc --watch) and reloaded by the Functions emulator

Options (after \`npm start --\` or \`npm run dev --\`):
  --fresh    start empty: forget the stored sign-ups, the MailerLite account and the mail
  --help     this text

Firestore, Pub/Sub, Cloud Tasks, Functions and Hosting are Google's Firebase emulators; Firestore and Pub/Sub
need Java 21+ and their emulators on disk (dev/emulators/find.ts says what it found, or what to install).
MailerLite and the SMTP outbox are stand-ins (stand-ins/), as they have no emulator. Data survives a restart
(Ctrl-C) in GOODY_DATA_DIR: the Firestore emulator's export, the MailerLite account and each mail as it arrives.

Environment:
${PORT_SPECS.map((spec) => `  ${spec.env.padEnd(26)} ${String(spec.defaultPort).padEnd(5)} ${spec.purpose}`).join('\n')}
  GOODY_MAILERLITE_TASKS_PER_MINUTE  the contact queue's rate (default 115; benchmarks compress MailerLite's minute)
  GOODY_MAIL_TASKS_PER_SECOND      the thank-you queue's rate (default 20)
  GOODY_MAIL_PER_HOUR              the mail budget: thank-you mails an hour (default 500)
  GOODY_SYNC_MIN_INTERVAL_SECONDS  the wait between two syncs (default 60; the e2e suite sets 0)
  GOODY_DELIVERY_MAX_ATTEMPTS, GOODY_DELIVERY_MAX_RETRY_SECONDS, GOODY_DELIVERY_MIN_BACKOFF_SECONDS
                                   the delivery tasks' retries (default 400 attempts, 2 days, 10 s)
  GOODY_DELIVERY_QUEUE_WAIT_SECONDS  how long the reconciler allows a task to wait in its queue (default 6 h)
  GOODY_DELIVERY_CONFIRM_SECONDS   how soon the reconciler re-drives a part whose enqueue never answered (default 240)
  GOODY_MAIL_BUDGET_WINDOW_SECONDS the mail budget's window (default 3600: MAIL_PER_HOUR is per hour)
  GOODY_SCHEDULES                  scheduled functions fired on a schedule of their own, e.g.
                                   "reconcile-deliveries=every 5 seconds" (default: each one's own schedule)
  GOODY_ENFORCE_APP_CHECK          true: the callables refuse calls without an App Check token (default false;
                                   the browser suite's App Check run, GOODY_E2E_APP_CHECK=1, sets it)
  GOODY_DATA_DIR                   what survives a restart (default .dev-data): firestore-export/, mailerlite/, mail/
  GOODY_EMULATOR_START_TIMEOUT_MS  how long firebase-tools may take to start (default 120000)
  GOODY_TASKS_EMULATOR_FAULTS      on (tests only): the Cloud Tasks emulator's port takes PUT /__control/faults
                                   {"refuseEnqueue": true|false}, answering every enqueue 503 while on (default off)
  GOODY_FUNCTIONS_WORKERS          worker processes a function may run at once (default 4; more requests wait their turn)
`;

export function resolveLauncherConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  root = repoRoot,
): LauncherConfig {
  let build = true;
  let dev = false;
  let fresh = false;
  for (const arg of argv) {
    if (arg === '--no-build') build = false;
    else if (arg === '--dev') dev = true;
    else if (arg === '--fresh') fresh = true;
    else throw new LauncherError(`Unknown argument "${arg}".\n\n${USAGE}`, 2);
  }
  if (dev && !build) {
    throw new LauncherError(
      '--dev and --no-build do not go together: npm run dev builds nothing up front (Vite serves the sources, tsc --watch compiles the functions).',
      2,
    );
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
    dev,
    dataDir,
    fresh,
    stackDir: stackDirFor(root, dev ? ports.vite : ports.hosting),
    mailerLiteApiKey: 'dev-mailerlite-key',
    emulatorStartTimeoutMs: Number(
      checked(
        'GOODY_EMULATOR_START_TIMEOUT_MS',
        env.GOODY_EMULATOR_START_TIMEOUT_MS?.trim() || '120000',
        positive,
      ),
    ),
    functionsOverrides: functionsOverrides(env),
    scheduleOverrides: parseScheduleOverrides(env.GOODY_SCHEDULES),
  };
}
