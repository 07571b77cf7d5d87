// Preloaded into firebase-tools by the launcher (node --require), beside parent-watch.cjs and
// tasks-emulator-pacing.cjs: makes the Functions emulator (firebase-tools lib/emulator/functionsEmulator.js and
// functionsRuntimeWorker.js) serve a function's requests from a bounded pool of worker processes, and answer
// every request, as Cloud Functions (2nd gen) does: it queues a request for an instance and always answers.
//
// As it ships, the emulator starts a worker process (about 100 MB, loading the functions' code) whenever none of
// the function's workers is idle, without bound: 50 calls to one callable start 50 processes, which on two cores
// load so slowly that some pass its load timeout (FUNCTIONS_DISCOVERY_TIMEOUT, 30 s). A worker that fails to load
// is left running, and its request is never answered (`handleHttpsTrigger` only logs "Failed to handle request").
//
// 1. *A pool per function* (`boundWorkerPool`): at most `workersPerFunction` requests of one function run at
//    once; the others wait, first come first served, and one that waited `queueWaitMs` is answered 503.
// 2. *Loads in turn*: at most `loadsAtOnce` workers of the stack load at once (a cold start is CPU bound).
// 3. *Every request answered*: a worker that fails to load is killed (`killWorkerThatFailedToLoad`) and the
//    request tried on a new one, `loadAttempts` times in all; then it is answered 503 with the reason, in the
//    callable protocol's error shape (the client SDKs read it as `unavailable`; Cloud Tasks retries it).
//
// The emulator's global work queue (FUNCTIONS_EMULATOR_PARALLEL) still holds the requests, waiting ones included:
// the launcher sets it high enough that one function's queue never stands in front of another's. If a
// firebase-tools upgrade changes the classes, this says so on stderr and changes nothing. Plain CommonJS because
// it runs before any loader; tested in functions-emulator-pool.test.ts against firebase-tools' own classes.
'use strict';

const os = require('node:os');

/** The pool's settings; GOODY_FUNCTIONS_WORKERS moves the requests one function may run at once (default 4). */
function poolSettings(env = process.env) {
  const workers = Number(env.GOODY_FUNCTIONS_WORKERS);
  return {
    workersPerFunction: Number.isInteger(workers) && workers >= 1 ? workers : 4,
    loadsAtOnce: Math.max(2, os.availableParallelism()),
    loadAttempts: 3,
    queueWaitMs: 60_000,
  };
}

/** A first-come-first-served counting semaphore of `size` turns. */
class Turns {
  constructor(size) {
    this.free = size;
    this.waiting = [];
  }

  /** Resolves with a function that gives the turn back once one is free, or with undefined after `timeoutMs`. */
  acquire(timeoutMs) {
    return new Promise((resolve) => {
      const entry = { resolve, timer: undefined };
      if (timeoutMs !== undefined) {
        entry.timer = setTimeout(() => {
          this.waiting = this.waiting.filter((other) => other !== entry);
          resolve(undefined);
        }, timeoutMs);
      }
      this.waiting.push(entry);
      this.handOut();
    });
  }

  handOut() {
    while (this.free > 0 && this.waiting.length > 0) {
      const { resolve, timer } = this.waiting.shift();
      clearTimeout(timer);
      this.free--;
      let released = false;
      resolve(() => {
        if (released) return;
        released = true;
        this.free++;
        this.handOut();
      });
    }
  }
}

const TURNS = Symbol('goodyFunctionTurns');
const LOADS = Symbol('goodyWorkerLoads');
/** The last load failure of each function, for the answer to the request it was for (the emulator only logs it). */
const LOAD_ERRORS = Symbol('goodyLoadErrors');

/**
 * Answers a request the emulator could not run: 503 with the reason, in the shape a callable's error has
 * (`{error: {status, message}}`), which an HTTP function's client reads as well.
 */
function answerUnavailable(res, message) {
  if (res.headersSent || res.writableEnded) return;
  const body = JSON.stringify({ error: { status: 'UNAVAILABLE', message } });
  res.writeHead(503, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'retry-after': '1',
  });
  res.end(body);
}

/** The trigger id the emulator's handleHttpsTrigger works out from the route (region and name, or the key). */
function triggerIdOf(req) {
  const name = req?.params?.trigger_name;
  return req?.params?.region ? `${req.params.region}-${name}` : name;
}

/**
 * A worker whose process did not come up within the emulator's load timeout is killed and marked finished, so
 * the pool never hands it a request and no process is left behind. Wraps RuntimeWorker.prototype.waitForSocketReady.
 */
function killWorkerThatFailedToLoad(RuntimeWorker, RuntimeWorkerState) {
  const proto = RuntimeWorker?.prototype;
  const shipped = proto?.waitForSocketReady;
  if (
    typeof shipped !== 'function' ||
    typeof RuntimeWorkerState?.FINISHING !== 'string' ||
    shipped.goodyKills
  ) {
    return false;
  }
  const wait = async function waitForSocketReady(...args) {
    try {
      return await shipped.apply(this, args);
    } catch (error) {
      if (this.state !== RuntimeWorkerState.FINISHED) this.state = RuntimeWorkerState.FINISHING;
      try {
        this.runtime?.process?.kill('SIGKILL');
      } catch {
        // Already gone.
      }
      throw error;
    }
  };
  wait.goodyKills = true;
  proto.waitForSocketReady = wait;
  return true;
}

/**
 * Bounds each function's workers and answers every request: wraps handleHttpsTrigger (every request goes through
 * it) and startRuntime (a worker's start and load). False, and nothing changed, if the class is not the one expected.
 */
function boundWorkerPool(FunctionsEmulator, settings = poolSettings()) {
  const proto = FunctionsEmulator?.prototype;
  const { handleHttpsTrigger: shippedHandle, startRuntime: shippedStart } = proto ?? {};
  if (
    typeof shippedHandle !== 'function' ||
    typeof shippedStart !== 'function' ||
    shippedHandle.goodyBounded
  ) {
    return false;
  }
  const { workersPerFunction, loadsAtOnce, loadAttempts, queueWaitMs } = settings;
  const log = (emulator, level, message) => {
    try {
      emulator.logger.logLabeled(level, 'functions', message);
    } catch {
      process.stderr.write(`[functions-emulator-pool] ${message}\n`);
    }
  };

  proto.startRuntime = async function startRuntime(...args) {
    this[LOADS] ??= new Turns(loadsAtOnce);
    const release = await this[LOADS].acquire();
    try {
      return await shippedStart.apply(this, args);
    } catch (error) {
      const trigger = args[1];
      this[LOAD_ERRORS] ??= new Map();
      if (trigger?.id)
        this[LOAD_ERRORS].set(trigger.id, error instanceof Error ? error.message : String(error));
      throw error;
    } finally {
      release();
    }
  };

  const handle = async function handleHttpsTrigger(req, res) {
    const record = this.triggers?.[triggerIdOf(req)];
    // Unknown or disabled functions, and the debugger's one-at-a-time mode: the emulator's own answer.
    if (!record?.enabled || this.debugMode) return shippedHandle.call(this, req, res);
    const id = record.def?.id ?? triggerIdOf(req);
    this[TURNS] ??= new Map();
    if (!this[TURNS].has(id)) this[TURNS].set(id, new Turns(workersPerFunction));
    const release = await this[TURNS].get(id).acquire(queueWaitMs);
    if (!release) {
      const message = `no worker of ${id} became free within ${queueWaitMs / 1000} s (the local stack runs at most ${workersPerFunction} requests of a function at once)`;
      log(this, 'WARN', message);
      answerUnavailable(res, message);
      return;
    }
    try {
      let failure = '';
      for (let attempt = 1; attempt <= loadAttempts; attempt++) {
        try {
          await shippedHandle.call(this, req, res);
        } catch (error) {
          failure = error instanceof Error ? error.message : String(error);
        }
        // Answered (by the function, or by the emulator's own error path): done.
        if (res.headersSent || res.writableEnded) return;
        const loadError = this[LOAD_ERRORS]?.get(id);
        this[LOAD_ERRORS]?.delete(id);
        failure = loadError ? `its worker failed to load (${loadError})` : failure || 'it was not answered';
        const next = `trying a new worker (attempt ${attempt + 1} of ${loadAttempts})`;
        if (attempt < loadAttempts) log(this, 'WARN', `${id}: ${failure}; ${next}.`);
      }
      const message = `${id} could not be run: ${failure} (${loadAttempts} attempts; see the Functions emulator's log)`;
      log(this, 'ERROR', message);
      answerUnavailable(res, message);
    } finally {
      release();
    }
  };
  handle.goodyBounded = true;
  proto.handleHttpsTrigger = handle;
  return true;
}

module.exports = { poolSettings, killWorkerThatFailedToLoad, boundWorkerPool };

// Only as a preload (the launcher passes this file to --require): a test that imports the functions changes nothing.
if (process.execArgv.includes(__filename)) {
  const load = (file) => {
    try {
      return require(`firebase-tools/lib/emulator/${file}`);
    } catch {
      return undefined;
    }
  };
  const worker = load('functionsRuntimeWorker.js');
  if (!killWorkerThatFailedToLoad(worker?.RuntimeWorker, worker?.RuntimeWorkerState)) {
    process.stderr.write(
      "[functions-emulator-pool] firebase-tools' RuntimeWorker is not the one expected: a worker that fails to " +
        'load is left running.\n',
    );
  }
  if (!boundWorkerPool(load('functionsEmulator.js')?.FunctionsEmulator)) {
    process.stderr.write(
      "[functions-emulator-pool] firebase-tools' FunctionsEmulator is not the one expected: the Functions " +
        'emulator starts a process per request in flight, without bound, and leaves a request unanswered when ' +
        'its worker fails to load.\n',
    );
  }
}
