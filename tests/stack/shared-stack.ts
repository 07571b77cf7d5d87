// One stack for every case of a describe block (or a file) whose cases do not disturb each other: started once
// in a beforeAll, as a developer starts it (`npm start`, or what `args` say), on ports of its own with a data
// directory of its own, and killed in the afterAll with its output kept in tests/.artifacts. Starting a stack
// takes a build and the emulators' start (about 20 s on a 2-core machine): a stack per case would pay it per case.

import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll } from 'vitest';
import { type LaunchedStack, type LauncherRun, launchStack, type StackPorts } from './launcher-process.ts';

/** What the launcher prints last once everything is up: the ready block, closed by a rule line. */
export const READY_BANNER = /Ctrl-C stops everything\.\n(?: {2}.*\n)+─+/;

export interface SharedStack {
  readonly ports: StackPorts;
  /** GOODY_DATA_DIR: the Firestore export and the mail; removed after the last case. */
  readonly dataDir: string;
  readonly run: LauncherRun;
}

export interface SharedStackOptions {
  /** Where its output is kept in tests/.artifacts, for whoever reads a failure. */
  logName: string;
  /** `npm start` unless given. */
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  startTimeoutMs?: number;
  /**
   * Also wait for the functions: Hosting answers about 5 s before they are loaded, so a case that drives the
   * delivery waits for a callable's answer through the site's origin.
   */
  untilFunctionsLoad?: boolean;
}

const FUNCTIONS_LOAD_TIMEOUT_MS = 60_000;

/** Until a callable answers 200 through the site's origin, as the page calls it (Hosting's rewrite). */
async function functionsLoaded(ports: StackPorts, run: LauncherRun): Promise<void> {
  const deadline = Date.now() + FUNCTIONS_LOAD_TIMEOUT_MS;
  for (;;) {
    const response = await fetch(`http://127.0.0.1:${ports.GOODY_HOSTING_PORT}/api/send-thank-you-email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: { email: 'warm-up@example.com' } }),
    }).catch(() => null);
    await response?.arrayBuffer();
    if (response?.status === 200) return;
    if (Date.now() > deadline) throw new Error(`the callables never answered:\n${run.output().slice(-3000)}`);
    await delay(500);
  }
}

/**
 * Registers the beforeAll that starts the stack and the afterAll that kills it, in the describe block (or file)
 * it is called in; the returned object's fields are there from the first case on.
 */
export function sharedStack(options: SharedStackOptions): SharedStack {
  const startTimeoutMs = options.startTimeoutMs ?? 150_000;
  let started: LaunchedStack | undefined;

  beforeAll(
    async () => {
      started = await launchStack(options.command ?? 'npm', options.args ?? ['start'], { env: options.env });
      await started.run.waitFor(READY_BANNER, startTimeoutMs);
      started.run.rememberTree();
      if (options.untilFunctionsLoad) await functionsLoaded(started.ports, started.run);
    },
    startTimeoutMs + FUNCTIONS_LOAD_TIMEOUT_MS + 10_000,
  );

  afterAll(() => {
    // A failed run keeps its stack directory for debugging; the test's is of no further use.
    started?.remove();
    started?.run.keepOutput(options.logName);
  });

  const get = (): LaunchedStack => {
    if (!started) throw new Error('the shared stack is not started: use it inside a case, not at collection');
    return started;
  };
  return {
    get ports() {
      return get().ports;
    },
    get dataDir() {
      return get().dataDir;
    },
    get run() {
      return get().run;
    },
  };
}

/**
 * The delivery files' stack: `npm run emulators` (it runs what npm test's build step built) with the settings
 * `env` compresses for the file, its functions loaded before the first case.
 */
export function emulatorsStack(logName: string, env: Record<string, string> = {}): SharedStack {
  return sharedStack({ logName, args: ['run', 'emulators'], env, untilFunctionsLoad: true });
}
