// Starts the launcher's child processes and makes sure none outlives it. Each child leads a process group of its
// own, so a Ctrl-C in the terminal reaches only the launcher, which then stops them: firebase-tools gets one
// SIGINT (its clean shutdown stops its workers and java), what is alive after a grace period is killed with its
// group, and so is every process ever seen below a child (firebase-tools starts java in a group of its own).

import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import {
  descendantsOf,
  isStillRunning,
  killProcesses,
  listProcesses,
  type ProcessEntry,
} from '../process-table.ts';
import { LauncherError } from './errors.ts';

export interface ChildSpec {
  /** In messages: "the Firebase emulators (firebase-tools)". */
  name: string;
  /** Prefix of its output lines. */
  label: string;
  command: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** A task (a build) ends by itself; a service ending on its own is a failure that stops the stack. */
  kind: 'task' | 'service';
  /** How to ask it to stop: firebase-tools shuts down cleanly on one SIGINT sent to it alone. */
  stop?: { signal: NodeJS.Signals; target: 'leader' | 'group' };
  /** How long a clean stop may take before the group is killed. */
  graceMs?: number;
  onLine?: (line: string) => void;
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  error?: Error;
}

export function describeExit(exit: ChildExit): string {
  if (exit.error) return `could not start (${exit.error.message})`;
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code}`;
}

function trySignal(pid: number, signal: NodeJS.Signals): void {
  // 0, 1 and -1 would reach our own group, init, or every process we may signal: never a child of ours.
  if (!Number.isInteger(pid) || Math.abs(pid) <= 1) return;
  try {
    process.kill(pid, signal);
  } catch {
    // ESRCH: already gone. EPERM cannot happen for our own children.
  }
}

export class SupervisedChild {
  exit: ChildExit | undefined;
  readonly exited: Promise<ChildExit>;
  readonly pid: number;

  constructor(
    readonly spec: ChildSpec,
    readonly process: ChildProcess,
  ) {
    this.pid = process.pid ?? -1;
    this.exited = new Promise((resolve) => {
      process.once('error', (error) => {
        // 'error' without a pid means spawn failed; with one, 'exit' still follows.
        if (process.pid === undefined) {
          this.exit = { code: null, signal: null, error };
          resolve(this.exit);
        }
      });
      process.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
  }
}

export class Supervisor {
  private readonly children = new Set<SupervisedChild>();
  /** Every process seen below a child, kept so that one that left its group or lost its parent is still ended. */
  private readonly seen = new Map<number, ProcessEntry>();
  private stopping = false;

  constructor(
    private readonly output: (line: string) => void,
    private readonly onUnexpectedExit: (child: SupervisedChild, exit: ChildExit) => void,
  ) {}

  start(spec: ChildSpec): SupervisedChild {
    if (this.stopping) throw new LauncherError(`Not starting ${spec.name}: the launcher is stopping.`);
    const proc = spawn(spec.command, [...spec.args], {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      // No stdin: firebase-tools then knows it is not interactive and never waits on a prompt.
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const child = new SupervisedChild(spec, proc);
    this.children.add(child);
    for (const stream of [proc.stdout, proc.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
        this.output(`[${spec.label}] ${line}`);
        spec.onLine?.(line);
      });
    }
    void child.exited.then((exit) => {
      this.children.delete(child);
      if (spec.kind === 'service' && !this.stopping) this.onUnexpectedExit(child, exit);
    });
    return child;
  }

  /** Runs a task to its end; a failure is a LauncherError naming it. */
  async runTask(spec: Omit<ChildSpec, 'kind'>): Promise<void> {
    const child = this.start({ ...spec, kind: 'task' });
    const exit = await child.exited;
    if (this.stopping) return;
    if (exit.code !== 0)
      throw new LauncherError(`${spec.name} failed: it ${describeExit(exit)}. See its output above.`);
  }

  /** Records the current process tree below every child. Cheap; called after start-up and before stopping. */
  rememberDescendants(): void {
    const table = listProcesses();
    const roots = [...this.children].map((child) => child.pid).filter((pid) => pid > 0);
    for (const entry of descendantsOf(roots, table)) this.seen.set(entry.pid, entry);
  }

  /** Stops every child (clean stop first, then kill), and every process seen below one. Idempotent. */
  async stopAll(): Promise<void> {
    this.stopping = true;
    this.rememberDescendants();
    await Promise.all([...this.children].map((child) => this.stopChild(child)));
    killProcesses(this.leftovers());
    // Give the kernel a moment to reap what was just killed, so "every port is free" holds when this returns.
    for (let i = 0; i < 50 && this.leftovers().length > 0; i++) await delay(20);
  }

  /** Synchronous last resort (process 'exit', a second Ctrl-C): SIGKILL to everything, no waiting. */
  killEverythingNow(): void {
    this.stopping = true;
    this.rememberDescendants();
    for (const child of this.children) trySignal(-child.pid, 'SIGKILL');
    killProcesses(this.leftovers());
  }

  private async stopChild(child: SupervisedChild): Promise<void> {
    if (child.exit) {
      trySignal(-child.pid, 'SIGKILL');
      return;
    }
    const stop = child.spec.stop ?? { signal: 'SIGTERM', target: 'group' };
    trySignal(stop.target === 'group' ? -child.pid : child.pid, stop.signal);
    const graceMs = child.spec.graceMs ?? 10_000;
    const timer = delay(graceMs, 'timeout' as const);
    const outcome = await Promise.race([child.exited, timer]);
    if (outcome === 'timeout') {
      this.output(`[launcher] ${child.spec.name} did not stop within ${graceMs / 1000} s; killing it.`);
    }
    // Also after a clean exit: whatever it left in its group goes too.
    trySignal(-child.pid, 'SIGKILL');
    await child.exited;
  }

  private leftovers(): ProcessEntry[] {
    return [...this.seen.values()].filter(isStillRunning);
  }
}
