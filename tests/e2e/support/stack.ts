// One whole GOODY stack (`npm start`'s launcher) as a child process on free ports, for the browser suite and
// bench:load: started beside a developer's own `npm start` without touching its ports, data or mail.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CALLABLES } from '@goody/contract';
import { stackDirFor } from '../../../dev/stack.ts';
import { loopbackOnlyEnv } from '../../../stand-ins/loopback-env.ts';
import {
  freeStackPorts,
  isPortFree,
  type LauncherRun,
  PORT_VARIABLES,
  portEnv,
  repoRoot,
  runLauncher,
  type StackPorts,
} from '../../stack/launcher-process.ts';

export { repoRoot };

export const PROJECT_ID = 'demo-goody';
export const REGION = 'us-central1';

/** Where each part of a running stack answers (all on loopback). Plain data, so Vitest can pass it to tests. */
export interface StackInfo {
  /** The site, e.g. http://127.0.0.1:5000 */
  siteUrl: string;
  /** Base of the callables: http://127.0.0.1:<functions>/demo-goody/us-central1 */
  functionsUrl: string;
  /** The Firebase Firestore emulator (REST and its emulator endpoints): http://127.0.0.1:<firestore> */
  firestoreUrl: string;
  /** Base of the Functions emulator, for what Cloud Scheduler and Cloud Tasks call: http://127.0.0.1:<functions> */
  functionsEmulatorUrl: string;
  /** The MailerLite stand-in's root (the API is under /api, control under /__control): http://127.0.0.1:<port> */
  mailerLiteUrl: string;
  /** The SMTP outbox's HTTP API root: http://127.0.0.1:<port> */
  smtpApiUrl: string;
  /** firebase-tools' emulator hub (e.g. PUT /functions/disableBackgroundTriggers): http://127.0.0.1:<hub> */
  hubUrl: string;
}

export interface RunningStack {
  info: StackInfo;
  /** Stops it as Ctrl-C does, and fails unless every process is gone and every port free again. */
  stop(): Promise<void>;
}

// The launcher builds the site and the functions first; a cold 2-core machine is slow.
const START_TIMEOUT_MS = 300_000;
const STOP_TIMEOUT_MS = 30_000;
const READY_BANNER = /Ctrl-C stops everything\.\n(?: {2}.*\n)+─+/;
const PORT_TAKEN_EXIT_CODE = 2;

export function stackInfoFromPorts(ports: Pick<StackPorts, (typeof PORT_VARIABLES)[number]>): StackInfo {
  const at = (port: number) => `http://127.0.0.1:${port}`;
  return {
    siteUrl: at(ports.GOODY_HOSTING_PORT),
    functionsUrl: `${at(ports.GOODY_FUNCTIONS_PORT)}/${PROJECT_ID}/${REGION}`,
    firestoreUrl: at(ports.GOODY_FIRESTORE_PORT),
    functionsEmulatorUrl: at(ports.GOODY_FUNCTIONS_PORT),
    mailerLiteUrl: at(ports.GOODY_MAILERLITE_PORT),
    smtpApiUrl: at(ports.GOODY_SMTP_API_PORT),
    hubUrl: at(ports.GOODY_HUB_PORT),
  };
}

const DEFAULT_PORTS: StackPorts = {
  GOODY_HOSTING_PORT: 5000,
  GOODY_VITE_PORT: 5173,
  GOODY_FUNCTIONS_PORT: 5001,
  GOODY_FIRESTORE_PORT: 8080,
  GOODY_PUBSUB_PORT: 8085,
  GOODY_TASKS_PORT: 9499,
  GOODY_MAILERLITE_PORT: 3080,
  GOODY_SMTP_PORT: 2525,
  GOODY_SMTP_API_PORT: 8025,
  GOODY_HUB_PORT: 4400,
  GOODY_LOGGING_PORT: 4500,
  GOODY_EVENTARC_PORT: 9299,
  GOODY_FIRESTORE_WEBSOCKET_PORT: 9150,
};

/**
 * A stack that already runs, when GOODY_USE_RUNNING_STACK=1: at `npm start`'s ports, or those its GOODY_*_PORT
 * variables name.
 */
export function runningStackFromEnv(env: NodeJS.ProcessEnv = process.env): StackInfo | undefined {
  if (env.GOODY_USE_RUNNING_STACK !== '1') return undefined;
  const ports = { ...DEFAULT_PORTS };
  for (const name of PORT_VARIABLES) {
    const raw = env[name];
    if (raw !== undefined && raw.trim() !== '') ports[name] = Number(raw);
  }
  return stackInfoFromPorts(ports);
}

function functionsLoaded(output: string): boolean {
  const names = /^ {2}Functions {3}http:\/\/\S+ \(([^)]*)\)$/m.exec(output)?.[1]?.split(', ') ?? [];
  return Object.values(CALLABLES).every((name) => names.includes(name));
}

/**
 * Starts the launcher (`node --import tsx dev/start.ts`, what `npm start` runs) on free ports, and resolves once it prints its ready banner with the three callables loaded. `logFile` receives the
 * launcher's whole output when it stops (or fails to start). `root`: the repository it runs in (and builds
 * into), the repository itself unless given a copy of it (tests/stack/repo-copy.ts).
 */
export async function startStack(
  options: { logFile?: string; env?: Record<string, string>; root?: string } = {},
): Promise<RunningStack> {
  const root = options.root ?? repoRoot;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'goody-e2e-data-'));
  const saveLog = (run: LauncherRun) => {
    if (!options.logFile) return;
    mkdirSync(path.dirname(options.logFile), { recursive: true });
    writeFileSync(options.logFile, run.output());
  };

  // Free ports are picked, released, then bound by the launcher: another process may take one in between,
  // which the launcher reports (exit 2, nothing started). Pick again then.
  for (let attempt = 1; ; attempt++) {
    const ports = await freeStackPorts();
    const run = runLauncher(
      process.execPath,
      ['--import', 'tsx', 'dev/start.ts'],
      { ...loopbackOnlyEnv, ...portEnv(ports), GOODY_DATA_DIR: dataDir, ...options.env },
      { cwd: root },
    );
    try {
      await run.waitFor(READY_BANNER, START_TIMEOUT_MS);
    } catch (error) {
      run.rememberTree();
      run.killAll();
      saveLog(run);
      const exit = await within(run.exited, 5_000);
      rmSync(stackDirFor(root, ports.GOODY_HOSTING_PORT), { recursive: true, force: true });
      const portTaken = exit?.code === PORT_TAKEN_EXIT_CODE;
      if (portTaken && attempt < 3) continue;
      rmSync(dataDir, { recursive: true, force: true });
      throw error;
    }
    run.rememberTree();
    if (!functionsLoaded(run.output())) {
      await stopRun(run, ports, root).catch(() => {});
      saveLog(run);
      rmSync(dataDir, { recursive: true, force: true });
      throw new Error(`the stack started without its three callables:\n${run.output().slice(-4000)}`);
    }
    return {
      info: stackInfoFromPorts(ports),
      async stop() {
        try {
          await stopRun(run, ports, root);
        } finally {
          saveLog(run);
          rmSync(dataDir, { recursive: true, force: true });
        }
      },
    };
  }
}

/** The promise's value, or undefined once `ms` have passed; the timer never outlives it (nor holds the process). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function stopRun(run: LauncherRun, ports: StackPorts, root: string): Promise<void> {
  // Everything below the launcher right now, so anything that outlives the stop is found and named.
  run.rememberTree();
  const pid = run.child.pid as number;
  try {
    // What Ctrl-C does: SIGINT to the launcher's process group.
    process.kill(-pid, 'SIGINT');
  } catch {
    // Already gone.
  }
  const stopped = (await within(run.exited, STOP_TIMEOUT_MS)) !== undefined;
  const survivors = run.survivors();
  run.killAll();
  const busy: number[] = [];
  for (const port of Object.values(ports)) if (!(await isPortFree(port))) busy.push(port);
  // The launcher's generated files for the stack (dev/launcher/config.ts: keyed by the hosting port). It
  // removes them on a clean stop; after a forced one they are left.
  rmSync(stackDirFor(root, ports.GOODY_HOSTING_PORT), { recursive: true, force: true });
  const problems = [
    stopped ? '' : `the launcher did not stop within ${STOP_TIMEOUT_MS / 1000} s of SIGINT`,
    survivors.length > 0
      ? `processes left running (killed now): ${survivors.map((s) => s.pid).join(', ')}`
      : '',
    busy.length > 0 ? `ports still in use: ${busy.join(', ')}` : '',
  ].filter(Boolean);
  if (problems.length > 0) throw new Error(`stopping the stack: ${problems.join('; ')}`);
}
