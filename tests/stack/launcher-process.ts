// Runs `npm start` (or the launcher directly) as a child process on ports of its own, for tests that drive the
// whole stack from outside, as a developer or the e2e suite would.

import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  descendantsOf,
  isStillRunning,
  killProcesses,
  type ProcessEntry,
  processesMarked,
} from '../../dev/process-table.ts';
import { stackDirFor } from '../../dev/stack.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Every port variable the launcher reads, so a test stack never touches the default ports. */
export const PORT_VARIABLES = [
  'GOODY_HOSTING_PORT',
  'GOODY_VITE_PORT',
  'GOODY_FUNCTIONS_PORT',
  'GOODY_FIRESTORE_PORT',
  'GOODY_PUBSUB_PORT',
  'GOODY_TASKS_PORT',
  'GOODY_MAILERLITE_PORT',
  'GOODY_SMTP_PORT',
  'GOODY_SMTP_API_PORT',
  'GOODY_HUB_PORT',
  'GOODY_LOGGING_PORT',
  'GOODY_EVENTARC_PORT',
  'GOODY_FIRESTORE_WEBSOCKET_PORT',
] as const;

export type StackPorts = Record<(typeof PORT_VARIABLES)[number], number>;

/**
 * Where this process hands out stack ports from: GOODY_TEST_PORT_BASE (npm test gives each lane that starts stacks
 * a block of its own), else a random block. Always below the kernel's ephemeral range (32768 and up on Linux),
 * from which a listen on port 0 and every outgoing connection draw: a port picked there by a listen on 0 and
 * released could be handed to another stack's pick (or another process's socket) before this stack bound it,
 * and firebase-tools' Hosting emulator then moved to the next port without a word.
 */
function portBlockStart(): number {
  const base = Number(process.env.GOODY_TEST_PORT_BASE);
  if (Number.isInteger(base) && base >= 1024 && base < 65_000) return base;
  return 20_000 + 500 * randomInt(24);
}
let nextPort: number | undefined;

/**
 * Distinct ports free right now, from this process's block (portBlockStart), never one it handed out before:
 * two stacks of one test run never get the same port, even while one is starting and the other stopping.
 */
export async function freePorts(count: number): Promise<number[]> {
  nextPort ??= portBlockStart();
  const ports: number[] = [];
  while (ports.length < count) {
    if (nextPort > 65_000) nextPort = portBlockStart();
    const port = nextPort++;
    if (await isPortFree(port)) ports.push(port);
  }
  return ports;
}

export async function freeStackPorts(): Promise<StackPorts> {
  const ports = await freePorts(PORT_VARIABLES.length);
  return Object.fromEntries(PORT_VARIABLES.map((name, index) => [name, ports[index]])) as StackPorts;
}

export function portEnv(ports: StackPorts): Record<string, string> {
  return Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)]));
}

/** True when nothing listens on 127.0.0.1:port (a listen there succeeds). */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * The mark every process of one run carries in its environment (the launcher, firebase-tools, its function
 * workers, java, Vite), so that whatever outlives the run is found however it was re-parented or grouped.
 */
export const STACK_RUN_MARK = 'GOODY_STACK_RUN';

export interface LauncherRun {
  readonly child: ChildProcess;
  /** The value of STACK_RUN_MARK in the environment of every process of this run. */
  readonly mark: string;
  /** stdout and stderr, interleaved as they arrived. */
  output(): string;
  /** Resolves with the first match of `pattern` in the output; rejects if the process ends first or on timeout. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Every process below the run's root right now, remembered for `survivors()`. */
  rememberTree(): ProcessEntry[];
  /** Remembered processes, and any carrying this run's mark, that are still running. */
  survivors(): ProcessEntry[];
  /**
   * Ctrl-C as a terminal sends it (SIGINT to the run's whole process group); resolves with how the run
   * exited, or rejects with its last output if it has not within `timeoutMs`.
   */
  interrupt(timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * SIGKILL to the run's group, to every process below it now or remembered (with the group of each that leads
   * one: firebase-tools' workers are in its group) and to every process carrying the run's mark.
   */
  killAll(): void;
  /** Writes what the run printed to tests/.artifacts/`fileName`, kept for whoever reads a failure. */
  keepOutput(fileName: string): void;
}

/**
 * Starts `command args` in a process group of its own (as a terminal would run `npm start`), so a test can send
 * a signal to the whole group the way Ctrl-C does; in the repository, or in `cwd` (a copy of it).
 */
export function runLauncher(
  command: string,
  args: string[],
  env: Record<string, string>,
  { cwd = repoRoot }: { cwd?: string } = {},
): LauncherRun {
  const mark = randomUUID();
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env, [STACK_RUN_MARK]: mark },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const remembered = new Map<number, ProcessEntry>();

  return {
    child,
    mark,
    output: () => text,
    keepOutput(fileName) {
      const artifacts = path.join(repoRoot, 'tests', '.artifacts');
      mkdirSync(artifacts, { recursive: true });
      writeFileSync(path.join(artifacts, fileName), text);
    },
    exited,
    waitFor(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(text);
          if (match) {
            finish();
            resolve(match);
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(
            new Error(
              `timed out after ${timeoutMs} ms waiting for ${pattern}; output:\n${text.slice(-4000)}`,
            ),
          );
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        void exited.then(({ code, signal }) => {
          // Let the last output arrive before deciding.
          setTimeout(() => {
            if (!listeners.has(check)) return;
            finish();
            reject(
              new Error(
                `exited (${code ?? signal}) before printing ${pattern}; output:\n${text.slice(-4000)}`,
              ),
            );
          }, 100);
        });
        check();
      });
    },
    rememberTree() {
      const tree = child.pid ? descendantsOf([child.pid]) : [];
      for (const entry of tree) remembered.set(entry.pid, entry);
      return tree;
    },
    survivors() {
      const found = new Map<number, ProcessEntry>();
      for (const entry of [...remembered.values(), ...processesMarked(STACK_RUN_MARK, mark)]) {
        if (isStillRunning(entry)) found.set(entry.pid, entry);
      }
      return [...found.values()];
    },
    interrupt(timeoutMs) {
      process.kill(-(child.pid as number), 'SIGINT');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`did not stop:\n${text.slice(-3000)}`)), timeoutMs);
      });
      return Promise.race([exited, late]).finally(() => clearTimeout(timer));
    },
    killAll() {
      // What is below the run right now (a function worker started since the last look), before the group goes.
      const tree = child.pid ? descendantsOf([child.pid]) : [];
      for (const entry of tree) remembered.set(entry.pid, entry);
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
      killProcesses([...remembered.values()]);
      killProcesses(processesMarked(STACK_RUN_MARK, mark));
    },
  };
}

export interface LaunchedStack {
  readonly ports: StackPorts;
  /** GOODY_DATA_DIR: the Firestore export and the mail. */
  readonly dataDir: string;
  readonly run: LauncherRun;
  /**
   * Kills the run and removes its data directory and its stack directory (keyed by the page's port: Hosting's,
   * or Vite's under `npm run dev`).
   */
  remove(): void;
}

/**
 * Starts `command args` (`npm start`, or the launcher directly) as a stack on ports of its own, with a data
 * directory of its own; `env` adds to what the launcher is given, `cwd` runs it in a copy of the repository.
 */
export async function launchStack(
  command: string,
  args: string[],
  { env = {}, cwd = repoRoot }: { env?: Record<string, string>; cwd?: string } = {},
): Promise<LaunchedStack> {
  const ports = await freeStackPorts();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'goody-stack-data-'));
  const run = runLauncher(command, args, { ...portEnv(ports), GOODY_DATA_DIR: dataDir, ...env }, { cwd });
  return {
    ports,
    dataDir,
    run,
    remove() {
      run.killAll();
      for (const dir of [
        dataDir,
        stackDirFor(cwd, ports.GOODY_HOSTING_PORT),
        stackDirFor(cwd, ports.GOODY_VITE_PORT),
      ]) {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
