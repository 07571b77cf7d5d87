// The launcher's correction of the Functions emulator's worker pool, driven through firebase-tools' own code:
// its hub server (routes and work queue), FunctionsEmulator.handleHttpsTrigger and startRuntime, its
// RuntimeWorkerPool and RuntimeWorker, which proxy each request to a real worker process over its socket. Only
// the worker's program is this file's: a few lines that answer on the socket the emulator gives it (or never
// come up, for a worker that fails to load), in place of the functions' code, which the stack tests run.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const { boundWorkerPool, killWorkerThatFailedToLoad, poolSettings } =
  require('./functions-emulator-pool.cjs') as {
    boundWorkerPool: (emulatorClass: unknown, settings?: PoolSettings) => boolean;
    killWorkerThatFailedToLoad: (workerClass: unknown, workerState: unknown) => boolean;
    poolSettings: (env?: Record<string, string | undefined>) => PoolSettings;
  };

interface PoolSettings {
  workersPerFunction: number;
  loadsAtOnce: number;
  loadAttempts: number;
  queueWaitMs: number;
}

const firebaseTools = path.dirname(require.resolve('firebase-tools/package.json'));
const emulatorFile = (name: string) => path.join(firebaseTools, 'lib', 'emulator', name);

interface EmulatorModules {
  // biome-ignore lint/suspicious/noExplicitAny: firebase-tools' classes, untyped JavaScript
  FunctionsEmulator: any;
  // biome-ignore lint/suspicious/noExplicitAny: as above
  RuntimeWorker: any;
  RuntimeWorkerState: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: as above
  RuntimeWorkerPool: any;
}

/** Fresh copies of firebase-tools' Functions emulator modules, so one case's correction never reaches another's. */
function freshModules(): EmulatorModules {
  for (const name of ['functionsEmulator.js', 'functionsRuntimeWorker.js'])
    delete require.cache[emulatorFile(name)];
  const worker = require(emulatorFile('functionsRuntimeWorker.js'));
  const emulator = require(emulatorFile('functionsEmulator.js'));
  return {
    FunctionsEmulator: emulator.FunctionsEmulator,
    RuntimeWorker: worker.RuntimeWorker,
    RuntimeWorkerState: worker.RuntimeWorkerState,
    RuntimeWorkerPool: worker.RuntimeWorkerPool,
  };
}

const scratch = mkdtempSync(path.join(tmpdir(), 'goody-pool-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// The worker's program: answers the emulator's health check and each request (after `ANSWER_MS`) with its pid,
// on the socket path it is given in PORT, as the functions' runtime does; with LOAD=never it never listens.
const WORKER = path.join(scratch, 'worker.cjs');
writeFileSync(
  WORKER,
  `const http = require('node:http');
if (process.env.LOAD === 'never') setInterval(() => {}, 60000);
else http.createServer((req, res) => {
  if (req.url === '/__/health') return res.end('ok');
  req.resume();
  req.on('end', () => setTimeout(() => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ result: { pid: process.pid } }));
  }, Number(process.env.ANSWER_MS || 0)));
}).listen(process.env.PORT);
`,
);

interface Stand {
  url: string;
  /** Every worker process the emulator started, in order. */
  workers: ChildProcess[];
  /** The most worker processes alive at once. */
  mostAlive: number;
  /** How many workers were still loading (not yet IDLE) when each new one was started. */
  loadingAtStart: number[];
  close(): Promise<void>;
}

const stands: Stand[] = [];
afterEach(async () => {
  await Promise.all(stands.splice(0).map((stand) => stand.close()));
});

/**
 * firebase-tools' Functions emulator with one HTTP function, `us-central1-hello`, served by its own hub server on
 * loopback. Everything about a request's way to a worker is the emulator's; only the process it starts is ours.
 */
async function standUp(
  modules: EmulatorModules,
  workerEnv: Record<string, string> = {},
  workQueueSize = 1000,
): Promise<Stand> {
  const { FunctionsEmulator, RuntimeWorkerPool } = modules;
  const { IPCConn } = require(emulatorFile('functionsEmulator.js'));
  const { WorkQueue } = require(emulatorFile('workQueue.js'));
  const { EmulatorLogger } = require(emulatorFile('emulatorLogger.js'));
  const { Emulators, FunctionsExecutionMode } = require(emulatorFile('types.js'));
  const { getTemporarySocketPath } = require(emulatorFile('functionsEmulatorShared.js'));

  const workers: ChildProcess[] = [];
  const alive = new Set<ChildProcess>();
  const stand = { workers, mostAlive: 0, loadingAtStart: [] as number[] } as unknown as Stand;
  const pool = new RuntimeWorkerPool(FunctionsExecutionMode.AUTO);
  const emulator = Object.create(FunctionsEmulator.prototype);
  Object.assign(emulator, {
    args: { projectId: 'demo-goody' },
    debugMode: false,
    multicastTriggers: {},
    triggers: {
      'us-central1-hello': {
        enabled: true,
        def: {
          id: 'us-central1-hello',
          name: 'hello',
          entryPoint: 'hello',
          region: 'us-central1',
          platform: 'gcfv2',
          httpsTrigger: {},
          timeoutSeconds: 60,
        },
        backend: { codebase: 'default', runtime: 'nodejs20', functionsDir: scratch },
      },
    },
    workerPools: { default: pool },
    workQueue: new WorkQueue(FunctionsExecutionMode.AUTO, workQueueSize),
    logger: EmulatorLogger.forEmulator(Emulators.FUNCTIONS),
    getRuntimeEnvs: () => ({}),
    resolveSecretEnvs: async () => ({}),
    // What startNode does, with this file's worker program in place of the functions' runtime.
    startNode: async () => {
      stand.loadingAtStart.push(
        [...pool.workers.values()].flat().filter((w: { state: string }) => w.state === 'CREATED').length,
      );
      const socketPath = getTemporarySocketPath();
      const child = spawn(process.execPath, [WORKER], {
        env: { ...process.env, ...workerEnv, PORT: socketPath },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      workers.push(child);
      alive.add(child);
      stand.mostAlive = Math.max(stand.mostAlive, alive.size);
      child.once('exit', () => alive.delete(child));
      return {
        process: child,
        events: new (require('node:events').EventEmitter)(),
        cwd: scratch,
        conn: new IPCConn(socketPath),
      };
    },
  });
  const hub = emulator.createHubServer();
  const server: Server = await new Promise((resolve) => {
    const listening = hub.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('no address');
  stand.url = `http://127.0.0.1:${address.port}/demo-goody/us-central1/hello`;
  stand.close = async () => {
    emulator.workQueue.stop();
    for (const child of workers) child.kill('SIGKILL');
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  stands.push(stand);
  return stand;
}

/** A callable's POST; resolves with the status and body, or 'no answer' once `ms` pass without one. */
async function call(url: string, ms = 20_000): Promise<{ status: number; body: string } | 'no answer'> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: {} }),
      signal: AbortSignal.timeout(ms),
    });
    return { status: response.status, body: await response.text() };
  } catch (error) {
    if (error instanceof DOMException && error.name === 'TimeoutError') return 'no answer';
    throw error;
  }
}

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

async function withDiscoveryTimeout<T>(seconds: number, body: () => Promise<T>): Promise<T> {
  const before = process.env.FUNCTIONS_DISCOVERY_TIMEOUT;
  process.env.FUNCTIONS_DISCOVERY_TIMEOUT = String(seconds);
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env.FUNCTIONS_DISCOVERY_TIMEOUT;
    else process.env.FUNCTIONS_DISCOVERY_TIMEOUT = before;
  }
}

const settings = (overrides: Partial<PoolSettings> = {}): PoolSettings => ({
  workersPerFunction: 4,
  loadsAtOnce: 2,
  loadAttempts: 3,
  queueWaitMs: 60_000,
  ...overrides,
});

function corrected(overrides: Partial<PoolSettings> = {}): EmulatorModules {
  const modules = freshModules();
  expect(killWorkerThatFailedToLoad(modules.RuntimeWorker, modules.RuntimeWorkerState)).toBe(true);
  expect(boundWorkerPool(modules.FunctionsEmulator, settings(overrides))).toBe(true);
  return modules;
}

describe("the Functions emulator's worker pool, as it ships", () => {
  it('starts a worker process per request in flight, without bound', async () => {
    const stand = await standUp(freshModules(), { ANSWER_MS: '1500' });
    const answers = await Promise.all(Array.from({ length: 12 }, () => call(stand.url)));
    expect(answers.every((answer) => answer !== 'no answer' && answer.status === 200)).toBe(true);
    expect(stand.workers.length).toBe(12);
  });

  it('never answers a request whose worker fails to load, and leaves that worker running', async () => {
    const stand = await standUp(freshModules(), { LOAD: 'never' });
    const answer = await withDiscoveryTimeout(1, () => call(stand.url, 4_000));
    expect(answer).toBe('no answer');
    expect(stand.workers.length).toBe(1);
    expect(isRunning(stand.workers[0] as ChildProcess)).toBe(true);
  });
});

describe("the launcher's correction", () => {
  it('answers a burst of 50 concurrent calls to one function with at most the pool size of processes', async () => {
    const stand = await standUp(corrected({ workersPerFunction: 4 }), { ANSWER_MS: '100' });
    const answers = await Promise.all(Array.from({ length: 50 }, () => call(stand.url)));
    expect(answers.filter((answer) => answer !== 'no answer' && answer.status === 200)).toHaveLength(50);
    expect(stand.workers.length).toBeLessThanOrEqual(4);
    expect(stand.mostAlive).toBeLessThanOrEqual(4);
    // The workers are reused: each served several of the 50.
    const pids = new Set(
      answers.map((answer) => (answer === 'no answer' ? 0 : JSON.parse(answer.body).result.pid)),
    );
    expect(pids.size).toBe(stand.workers.length);
  });

  it('serves waiting requests first come, first served', async () => {
    const stand = await standUp(corrected({ workersPerFunction: 1 }), { ANSWER_MS: '50' });
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 6 }, async (_, n) => {
        await new Promise((resolve) => setTimeout(resolve, n * 20));
        await call(stand.url);
        order.push(n);
      }),
    );
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('loads workers in turn, at most loadsAtOnce at a time', async () => {
    const stand = await standUp(corrected({ workersPerFunction: 6, loadsAtOnce: 1 }), { ANSWER_MS: '500' });
    const answers = await Promise.all(Array.from({ length: 6 }, () => call(stand.url)));
    expect(answers.every((answer) => answer !== 'no answer' && answer.status === 200)).toBe(true);
    expect(stand.loadingAtStart.length).toBeGreaterThan(1);
    expect(stand.loadingAtStart.every((loading) => loading === 0)).toBe(true);
  });

  it('answers a request whose worker fails to load with a 503 and its reason, after trying new workers, and kills them', async () => {
    const stand = await standUp(corrected({ loadAttempts: 2 }), { LOAD: 'never' });
    const answer = await withDiscoveryTimeout(1, () => call(stand.url));
    expect(answer).not.toBe('no answer');
    if (answer === 'no answer') return;
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toEqual({
      error: {
        status: 'UNAVAILABLE',
        message: expect.stringMatching(
          /us-central1-hello could not be run: its worker failed to load \(Failed to load function.\).*2 attempts/,
        ),
      },
    });
    expect(stand.workers).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stand.workers.filter(isRunning)).toEqual([]);
  });

  it('answers 503 a request that found no free worker within the queue wait', async () => {
    const stand = await standUp(corrected({ workersPerFunction: 1, queueWaitMs: 300 }), {
      ANSWER_MS: '3000',
    });
    const [first, second] = await Promise.all([call(stand.url), call(stand.url)]);
    expect(first).toMatchObject({ status: 200 });
    expect(second).toMatchObject({ status: 503 });
    if (second === 'no answer') return;
    expect(JSON.parse(second.body).error.message).toMatch(
      /no worker of us-central1-hello became free within 0.3 s/,
    );
  });

  it('keeps its hands off a firebase-tools whose classes changed, and applies once', () => {
    expect(boundWorkerPool(undefined)).toBe(false);
    expect(boundWorkerPool(class {})).toBe(false);
    expect(killWorkerThatFailedToLoad(class {}, {})).toBe(false);
    const modules = corrected();
    expect(boundWorkerPool(modules.FunctionsEmulator, settings())).toBe(false);
  });

  it('has the launcher defaults, and takes the workers per function from the environment', () => {
    expect(poolSettings({})).toMatchObject({ workersPerFunction: 4, loadAttempts: 3, queueWaitMs: 60_000 });
    expect(poolSettings({}).loadsAtOnce).toBeGreaterThanOrEqual(2);
    expect(poolSettings({ GOODY_FUNCTIONS_WORKERS: '2' }).workersPerFunction).toBe(2);
    expect(poolSettings({ GOODY_FUNCTIONS_WORKERS: '0' }).workersPerFunction).toBe(4);
  });
});
