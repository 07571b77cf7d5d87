import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { listProcesses } from '../process-table.ts';
import { LauncherError } from './errors.ts';
import { type ChildExit, type ChildSpec, type SupervisedChild, Supervisor } from './supervisor.ts';

// A stand-in for firebase-tools: it starts one ordinary child and one detached child (as firebase-tools starts
// java), prints their pids, and on SIGINT exits at once without stopping the detached one.
const TREE_SCRIPT = `
const { spawn } = require('node:child_process');
const keepAlive = ['-e', 'setInterval(() => {}, 1000)'];
const plain = spawn(process.execPath, keepAlive, { stdio: 'ignore' });
const detached = spawn(process.execPath, keepAlive, { stdio: 'ignore', detached: true });
detached.unref();
process.on('SIGINT', () => process.exit(0));
console.log('pids ' + plain.pid + ' ' + detached.pid);
setInterval(() => {}, 1000);
`;

/** True while a process with this pid runs (a zombie does not count). */
const isAlive = (pid: number) => listProcesses().some((p) => p.pid === pid && p.state !== 'Z');

async function waitFor<T>(probe: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 250; i++) {
    const value = probe();
    if (value !== undefined) return value;
    await delay(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const lines: string[] = [];
const unexpected: ChildExit[] = [];
let supervisor: Supervisor;

function spec(script: string, overrides: Partial<ChildSpec> = {}): ChildSpec {
  return {
    name: 'The test service',
    label: 'test',
    command: process.execPath,
    args: ['-e', script],
    cwd: process.cwd(),
    env: process.env,
    kind: 'service',
    stop: { signal: 'SIGINT', target: 'leader' },
    ...overrides,
  };
}

async function startTree(): Promise<{ child: SupervisedChild; plain: number; detached: number }> {
  let pids: number[] | undefined;
  const child = supervisor.start(
    spec(TREE_SCRIPT, {
      onLine: (line) => {
        const match = /^pids (\d+) (\d+)$/.exec(line);
        if (match) pids = [Number(match[1]), Number(match[2])];
      },
    }),
  );
  const [plain, detached] = await waitFor(() => pids, 'the pids line');
  return { child, plain: plain as number, detached: detached as number };
}

describe('the supervisor', () => {
  afterEach(() => {
    supervisor?.killEverythingNow();
    lines.length = 0;
    unexpected.length = 0;
  });

  function newSupervisor(): Supervisor {
    supervisor = new Supervisor(
      (line) => lines.push(line),
      (_child, exit) => unexpected.push(exit),
    );
    return supervisor;
  }

  it('stops a child and everything below it, including a detached grandchild in a group of its own', async () => {
    newSupervisor();
    const { child, plain, detached } = await startTree();
    expect(isAlive(plain) && isAlive(detached)).toBe(true);

    await supervisor.stopAll();

    expect(child.exit).toEqual({ code: 0, signal: null });
    expect(isAlive(child.pid)).toBe(false);
    expect(isAlive(plain)).toBe(false);
    expect(isAlive(detached)).toBe(false);
    expect(unexpected).toEqual([]);
    expect(lines).toContain(`[test] pids ${plain} ${detached}`);
  });

  it('ends a remembered grandchild even after its parent died and it was re-parented', async () => {
    newSupervisor();
    const { child, detached } = await startTree();
    supervisor.rememberDescendants();
    process.kill(child.pid, 'SIGKILL');
    await child.exited;
    expect(isAlive(detached)).toBe(true);

    await supervisor.stopAll();

    expect(isAlive(detached)).toBe(false);
  });

  it('reports a service that exits by itself, and not one it stopped', async () => {
    newSupervisor();
    const crashing = supervisor.start(spec('setTimeout(() => process.exit(3), 50)'));
    await crashing.exited;
    await delay(10);
    expect(unexpected).toEqual([{ code: 3, signal: null }]);

    const { child } = await startTree();
    await supervisor.stopAll();
    await child.exited;
    expect(unexpected).toHaveLength(1);
  });

  it('kills a child that ignores the stop signal once the grace period is over', async () => {
    newSupervisor();
    let ready = false;
    const stubborn = supervisor.start(
      spec("process.on('SIGINT', () => {}); console.log('ready'); setInterval(() => {}, 1000);", {
        graceMs: 300,
        onLine: (line) => {
          if (line === 'ready') ready = true;
        },
      }),
    );
    await waitFor(() => (ready ? true : undefined), 'the ready line');

    await supervisor.stopAll();

    expect(stubborn.exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(lines).toContain('[launcher] The test service did not stop within 0.3 s; killing it.');
  });

  it('turns a failing task into a LauncherError naming it', async () => {
    newSupervisor();
    const failure = await supervisor
      .runTask({ ...spec("console.error('broken'); process.exit(2)"), name: 'The web build' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(LauncherError);
    expect((failure as LauncherError).message).toBe(
      'The web build failed: it exited with code 2. See its output above.',
    );
    expect(lines).toContain('[test] broken');
    expect(unexpected).toEqual([]);
  });

  it('says so when a program cannot be started at all', async () => {
    newSupervisor();
    const failure = await supervisor
      .runTask({ ...spec(''), command: '/nonexistent/program', name: 'The missing program' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect((failure as LauncherError).message).toContain('The missing program failed: it could not start');
  });
});
