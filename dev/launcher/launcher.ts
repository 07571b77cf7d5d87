// `npm start`: build, start the two stand-ins (MailerLite, SMTP), start Google's Firebase emulators (Hosting,
// Functions, Firestore, Pub/Sub, Cloud Tasks) wired to them, print where everything is, and on Ctrl-C (or any part
// failing) stop all of it. `npm run dev` (--dev): the same stack, with the functions compiled by tsc --watch
// (the Functions emulator reloads them on every change) and the page on Vite's dev server instead of Hosting.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { loopbackOnlyEnv } from '../../stand-ins/loopback-env.ts';
import {
  emulatorEnv,
  findGoogleEmulators,
  type GoogleEmulators,
  GoogleEmulatorsMissing,
} from '../emulators/find.ts';
import { DEV_MAILBOX_KEY_SECRET, DEV_UNSUBSCRIBE_SECRET } from '../stack.ts';
import { formatReadyBanner } from './banner.ts';
import {
  defaultBuildMismatch,
  FUNCTIONS_WATCH_ARGS,
  functionsEntry,
  TSC_WATCH_DONE,
  viteDevArgs,
  viteEnv,
  webBuildArgs,
} from './builds.ts';
import { type LauncherConfig, stackPortKeys } from './config.ts';
import { LauncherError } from './errors.ts';
import { assertPortsFree, type PortClaim, portClaims, probePort } from './ports.ts';
import { LocalScheduler } from './scheduler.ts';
import { prepareStackDir, writeStackFiles } from './stack-files.ts';
import {
  FIRESTORE_EXPORT_DIR,
  type RunningStandIns,
  type Stoppable,
  startStandIns,
  stopWithin,
} from './stand-ins.ts';
import { describeExit, type SupervisedChild, Supervisor } from './supervisor.ts';

/** Thrown inside start-up when a stop was requested meanwhile: not an error, just the end of start-up. */
class StartAborted extends Error {}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** How long Vite's dev server may take to serve the page once started (it answers within seconds). */
const VITE_START_TIMEOUT_MS = 60_000;

// One Ctrl-C can arrive twice: from the terminal (the whole foreground group) and forwarded by npm.
const REPEATED_SIGNAL_WINDOW_MS = 1_000;

const require = createRequire(import.meta.url);

export const firebaseBin = () => require.resolve('firebase-tools/lib/bin/firebase.js');

/**
 * The environment firebase-tools runs in: offline and non-interactive, with no emulator address inherited from
 * the developer's shell, and Java and the Java emulators it would otherwise download found on disk.
 */
export function firebaseToolsEnv(base: NodeJS.ProcessEnv, emulators: GoogleEmulators): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) {
    if (key.endsWith('_EMULATOR_HOST') || key === 'FIREBASE_EMULATOR_HUB') continue;
    env[key] = value;
  }
  // CI: firebase-tools skips its message-of-the-day fetch, and update-notifier (which it uses) stays off.
  env.CI = 'true';
  env.NO_UPDATE_NOTIFIER = '1';
  // The Functions emulator runs `npm show firebase-functions` synchronously (up to 10 s) to warn about an
  // outdated SDK; offline, npm answers from its cache or fails at once instead of waiting on the network.
  env.npm_config_offline = 'true';
  // The functions' firebase-admin would otherwise probe the GCE metadata server, off loopback.
  Object.assign(env, loopbackOnlyEnv);
  // The requests the Functions emulator's work queue holds at once: under the launcher's pool the requests beyond
  // a function's workers wait inside it, so the shipped bound (50) would let one function's waiting requests hold
  // back every other's. FUNCTIONS_EMULATOR_PARALLEL in the shell overrides it.
  env.FUNCTIONS_EMULATOR_PARALLEL =
    base.FUNCTIONS_EMULATOR_PARALLEL?.trim() || String(FUNCTIONS_REQUESTS_HELD);
  return emulatorEnv(emulators, env);
}

export const FUNCTIONS_REQUESTS_HELD = 1000;

/** firebase-tools' arguments that keep the Firestore emulator's data across a restart: import, export on exit. */
export function persistenceArgs(exportDir: string): string[] {
  const args = [`--export-on-exit=${exportDir}`];
  if (existsSync(path.join(exportDir, 'firebase-export-metadata.json')))
    args.unshift(`--import=${exportDir}`);
  return args;
}

/** Where the launcher's lines go: standard output, or standard error for failures and warnings. */
export type LauncherIO = Record<'out' | 'err', (line: string) => void>;

export const consoleIO: LauncherIO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

export class Launcher {
  private readonly supervisor: Supervisor;
  private readonly standIns: Stoppable[] = [];
  private shutdownPromise: Promise<number> | undefined;
  private finish: (code: number) => void = () => {};
  private readonly finished = new Promise<number>((resolve) => {
    this.finish = resolve;
  });
  private firstSignalAt = 0;
  /** firebase-tools' TMPDIR (its hub locator file), removed when the stack stops. */
  private firebaseTmpDir: string | undefined;
  private claims: PortClaim[] = [];
  /** Fires the scheduled functions on their schedules, as Cloud Scheduler does (scheduler.ts). */
  private scheduler: LocalScheduler | undefined;
  /** Set once the port check has passed: from then on the ports and the stack directory are this stack's. */
  private owned = false;

  constructor(
    private readonly config: LauncherConfig,
    private readonly io: LauncherIO = consoleIO,
  ) {
    this.supervisor = new Supervisor(io.out, (child, exit) => this.onUnexpectedExit(child, exit));
  }

  /** Runs until stopped; resolves with the exit code once everything it started is gone. */
  async run(): Promise<number> {
    try {
      await this.startUp();
    } catch (error) {
      if (error instanceof LauncherError) void this.shutdown(error.exitCode, `[launcher] ${error.message}`);
      else if (!(error instanceof StartAborted)) {
        const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
        void this.shutdown(1, `[launcher] unexpected failure: ${text}`);
      }
    }
    // Start-up is over (or was cut short); the stack runs until shutdown() is called.
    return await this.finished;
  }

  /** Ctrl-C, SIGTERM, SIGHUP: the first stops everything cleanly; a later one kills at once. */
  onSignal(signal: NodeJS.Signals): void {
    const now = Date.now();
    if (!this.shutdownPromise) {
      this.firstSignalAt = now;
      void this.shutdown(0, `[launcher] ${signal} received: stopping everything (again to kill at once).`);
      return;
    }
    if (now - this.firstSignalAt < REPEATED_SIGNAL_WINDOW_MS) return;
    this.io.err(`[launcher] ${signal} again: killing everything now.`);
    this.supervisor.killEverythingNow();
    process.exit(130);
  }

  /** Synchronous last resort for process 'exit'. */
  killEverythingNow(): void {
    this.supervisor.killEverythingNow();
  }

  shutdown(code: number, message?: string): Promise<number> {
    if (this.shutdownPromise) return this.shutdownPromise;
    if (message) (code === 0 ? this.io.out : this.io.err)(message);
    this.shutdownPromise = (async () => {
      await this.scheduler?.stop();
      await this.supervisor.stopAll();
      if (this.firebaseTmpDir) rmSync(this.firebaseTmpDir, { recursive: true, force: true });
      await Promise.all(this.standIns.reverse().map((item) => stopWithin(item, 5_000, this.io.out)));
      // Before the port check passed nothing was started, and the ports and the directory may be another stack's.
      if (!this.owned) return code;
      const probed = await Promise.all(this.claims.map((claim) => probePort(claim.host, claim.port)));
      const stillBusy = this.claims.filter((_, index) => probed[index] === 'EADDRINUSE');
      if (stillBusy.length > 0) {
        const ports = stillBusy.map((c) => `${c.port} (${c.purpose})`).join(', ');
        this.io.err(`[launcher] still in use after stopping: ${ports}`);
      }
      const debugLog = path.join(this.config.stackDir, 'firebase-debug.log');
      if (code === 0) rmSync(this.config.stackDir, { recursive: true, force: true });
      else if (existsSync(debugLog)) this.io.err(`[launcher] firebase-tools' debug log: ${debugLog}`);
      this.io.out(`[launcher] stopped${stillBusy.length === 0 ? '; every port it used is free again' : ''}.`);
      return code;
    })();
    void this.shutdownPromise.then(this.finish);
    return this.shutdownPromise;
  }

  private onUnexpectedExit(child: SupervisedChild, exit: Parameters<typeof describeExit>[0]): void {
    void this.shutdown(
      1,
      `[launcher] ${child.spec.name} ${describeExit(exit)} unexpectedly (see its last lines above); stopping everything else.`,
    );
  }

  private checkpoint(): void {
    if (this.shutdownPromise) throw new StartAborted();
  }

  /** npm run dev: tsc --watch on the functions, past its first compilation (the emulator starts on that). */
  private async startFunctionsCompiler(): Promise<void> {
    let compiled: (errors: number) => void = () => {};
    const firstCompilation = new Promise<number>((resolve) => {
      compiled = resolve;
    });
    const tsc = this.supervisor.start({
      name: 'The functions compiler (npm run build:watch -w functions: tsc --watch)',
      label: 'tsc',
      kind: 'service',
      command: 'npm',
      args: FUNCTIONS_WATCH_ARGS,
      cwd: this.config.repoRoot,
      env: process.env,
      onLine: (line) => {
        const done = TSC_WATCH_DONE.exec(line);
        if (done) compiled(Number(done[1]));
      },
    });
    const errors = await Promise.race([firstCompilation, tsc.exited.then(() => 'exited' as const)]);
    // An early exit is reported by the supervisor, which stops everything.
    if (errors === 'exited') throw new StartAborted();
    this.checkpoint();
    // With nothing compiled before, the check of the entry below says so instead.
    if (errors > 0 && existsSync(functionsEntry(this.config.repoRoot))) {
      this.io.err(
        `[launcher] WARNING: the functions do not compile (see the [tsc] lines above): the Functions emulator ` +
          'runs functions/lib as the last good compilation left it, and reloads once they compile.',
      );
    }
  }

  /** npm run dev: Vite's dev server on this stack's port, with the settings the web build is given. */
  private startViteDevServer(): SupervisedChild {
    const { config } = this;
    return this.supervisor.start({
      name: "Vite's dev server (npm run dev -w web)",
      label: 'vite',
      kind: 'service',
      command: 'npm',
      args: viteDevArgs(config.host, config.ports.vite),
      cwd: config.repoRoot,
      // The same VITE_* settings as npm start's build (so the same emulators), in Vite's development mode
      // whatever NODE_ENV the launcher inherited.
      env: { ...process.env, ...viteEnv(config), NODE_ENV: 'development' },
      graceMs: 5_000,
    });
  }

  /** Until the site answers with its page: Vite's dev server takes a few seconds, Hosting has said it is ready. */
  private async waitForSite(siteUrl: string, vite?: SupervisedChild): Promise<void> {
    const deadline = Date.now() + (vite ? VITE_START_TIMEOUT_MS : 0);
    for (;;) {
      // An early exit is reported by the supervisor, which stops everything.
      if (vite?.exit) throw new StartAborted();
      this.checkpoint();
      const failure = await siteFailure(siteUrl);
      if (failure === undefined) return;
      if (Date.now() >= deadline) {
        throw new LauncherError(
          vite
            ? `Vite's dev server did not serve the site at ${siteUrl} within ${VITE_START_TIMEOUT_MS / 1000} s (${failure}).`
            : `The Hosting emulator reported ready but ${siteUrl} did not serve the site (${failure}).`,
        );
      }
      await delay(250, undefined, { ref: false });
    }
  }

  private async startUp(): Promise<void> {
    const { config, io } = this;
    const { repoRoot } = config;
    let emulators: GoogleEmulators;
    try {
      emulators = findGoogleEmulators();
    } catch (error) {
      if (error instanceof GoogleEmulatorsMissing) throw new LauncherError(error.message, 2);
      throw error;
    }
    io.out(`[launcher] Google's emulators: ${emulators.summary}`);

    this.claims = portClaims(config.ports, config.host, stackPortKeys(config.dev));
    await assertPortsFree(this.claims);
    this.checkpoint();

    this.owned = true;
    prepareStackDir(config.stackDir);
    const vite = viteEnv(config);
    // npm run emulators serves web/dist as built; npm start builds into the stack's own directory (a second stack
    // rebuilding web/dist with its own ports would rewire the first one's open site); npm run dev has Vite's page.
    let siteDir: string | undefined = path.join(repoRoot, 'web', 'dist');
    if (config.dev) {
      siteDir = undefined;
      await this.startFunctionsCompiler();
    } else if (config.build) {
      siteDir = path.join(config.stackDir, 'site');
      // The web build is a production build, as deployed, whatever NODE_ENV the launcher inherited (vitest
      // sets "test", which would make Vite bundle React's development build).
      for (const [what, args, env] of [
        ['web', webBuildArgs(siteDir), { ...process.env, ...vite, NODE_ENV: 'production' }],
        ['functions', ['run', 'build', '-w', 'functions'], process.env],
      ] as const) {
        const name = `The ${what} build (npm run build -w ${what})`;
        await this.supervisor.runTask({
          name,
          label: `${what} build`,
          command: 'npm',
          args,
          cwd: repoRoot,
          env,
        });
        this.checkpoint();
      }
    } else {
      const mismatch = defaultBuildMismatch(vite);
      if (mismatch) io.err(`[launcher] WARNING: ${mismatch}`);
    }

    for (const [what, file, build] of [
      ['site', siteDir && path.join(siteDir, 'index.html'), 'web'],
      ['functions', functionsEntry(repoRoot), 'functions'],
    ] as const) {
      if (file && !existsSync(file)) {
        const relative = path.relative(repoRoot, file);
        throw new LauncherError(
          config.dev
            ? `tsc --watch left no ${relative} (see the [tsc] lines above): fix what it reports and start \`npm run dev\` again.`
            : `The ${what} ${what === 'site' ? 'is' : 'are'} not built: ${relative} does not exist. ` +
                `Build with \`npm run build -w ${build}\`, or use \`npm start\`, which builds everything itself.`,
        );
      }
    }

    // The builds took a while: check the ports again.
    await assertPortsFree(this.claims);
    this.checkpoint();

    const standIns = await startStandIns(config, io.out, (item) => this.standIns.push(item));
    this.checkpoint();

    const files = writeStackFiles({
      ...config,
      publicDir: siteDir,
      functionsEnv: {
        ...functionsParams(standIns),
        ...config.functionsOverrides,
        // The link in the thank-you mail: this stack's unsubscribe function in the Functions emulator.
        UNSUBSCRIBE_URL: `${this.functionsBaseUrl()}/unsubscribe`,
      },
      compiledEntry: path.relative(path.join(repoRoot, 'functions'), functionsEntry(repoRoot)),
      reloadFunctions: config.dev,
      functionsSecrets: {
        MAILERLITE_API_KEY: config.mailerLiteApiKey,
        SMTP_URL: standIns.smtp.url,
        // A fixed dummy for the local stack only; a deploy uses a Secret Manager secret.
        UNSUBSCRIBE_SECRET: DEV_UNSUBSCRIBE_SECRET,
        MAILBOX_KEY_SECRET: DEV_MAILBOX_KEY_SECRET,
      },
    });

    const only = [...(config.dev ? [] : ['hosting']), 'functions', 'firestore', 'pubsub', 'tasks'];
    let functions: string[] | undefined;
    let markReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    // firebase-tools keeps where a project's emulator hub listens in <tmpdir>/hub-<project>.json, and its
    // export-on-exit goes by that file: with every stack on demo-goody, one stack's Ctrl-C exported another
    // stack's database, or none. A temp directory of its own keeps each stack to its own hub.
    this.firebaseTmpDir = mkdtempSync(path.join(tmpdir(), 'goody-firebase-'));
    const firebase = this.supervisor.start({
      name: 'firebase-tools (the Firebase emulators)',
      label: 'firebase',
      kind: 'service',
      command: process.execPath,
      args: [
        // The preloads (each file's header says what it corrects in firebase-tools).
        ...['parent-watch', 'tasks-emulator-pacing', 'functions-emulator-pool'].flatMap((name) => [
          '--require',
          fileURLToPath(new URL(`./${name}.cjs`, import.meta.url)),
        ]),
        firebaseBin(),
        'emulators:start',
        '--only',
        only.join(','),
        '--project',
        config.projectId,
        '--config',
        files.configPath,
        ...persistenceArgs(path.join(config.dataDir, FIRESTORE_EXPORT_DIR)),
      ],
      // firebase-tools writes firebase-debug.log (and the Firestore emulator its own log) into its working directory.
      cwd: config.stackDir,
      env: { ...firebaseToolsEnv(process.env, emulators), TMPDIR: this.firebaseTmpDir },
      stop: { signal: 'SIGINT', target: 'leader' },
      graceMs: 10_000,
      onLine: (raw) => {
        const line = raw.replace(ANSI, '');
        const loaded = /Loaded functions definitions from source: (.*?)\.?$/.exec(line);
        if (loaded) {
          // Entry points use dots where the exported names have dashes (firebase-functions groups).
          functions = (loaded[1] ?? '')
            .split(',')
            .map((name) => name.trim().replace(/\./g, '-'))
            .filter(Boolean);
        }
        if (/All emulators ready/.test(line)) markReady();
      },
    });

    const timeoutMs = config.emulatorStartTimeoutMs;
    const outcome = await Promise.race([
      ready.then(() => 'ready' as const),
      firebase.exited.then(() => 'exited' as const),
      delay(timeoutMs, 'timeout' as const, { ref: false }),
    ]);
    // An early exit is reported by the supervisor, which stops everything.
    if (outcome === 'exited') throw new StartAborted();
    this.checkpoint();
    if (outcome === 'timeout') {
      throw new LauncherError(
        `firebase-tools did not report its emulators ready within ${timeoutMs / 1000} s (see the [firebase] lines above).`,
      );
    }
    this.supervisor.rememberDescendants();

    const siteUrl = `http://${config.host}:${config.dev ? config.ports.vite : config.ports.hosting}`;
    await this.waitForSite(siteUrl, config.dev ? this.startViteDevServer() : undefined);
    this.supervisor.rememberDescendants();
    this.checkpoint();

    this.scheduler = new LocalScheduler({
      functionsOrigin: `http://${config.host}:${config.ports.functions}`,
      projectId: config.projectId,
      overrides: config.scheduleOverrides,
      log: io.err,
    });
    const scheduled = await this.scheduler.start();
    this.checkpoint();

    const functionsBaseUrl = this.functionsBaseUrl();
    io.out(formatReadyBanner({ config, standIns, siteUrl, functionsBaseUrl, functions, scheduled }));
  }

  private functionsBaseUrl(): string {
    const { host, ports, projectId, region } = this.config;
    return `http://${host}:${ports.functions}/${projectId}/${region}`;
  }
}

/** String params of the functions (firebase-functions/params defineString), for the emulator's .env.local. */
export function functionsParams(standIns: RunningStandIns): Record<string, string> {
  return {
    MAILERLITE_BASE_URL: standIns.mailerLite.baseUrl,
    // Group names: the functions resolve a name to its id (creating the group in the stand-in if needed).
    MAILERLITE_GROUP_UPDATES: 'GOODY updates',
    MAILERLITE_GROUP_CLUB: 'GOODY club',
    MAIL_FROM: 'GOODY <hello@goody.example>',
    // A demo- project cannot mint App Check tokens, so the local stack never enforces them.
    ENFORCE_APP_CHECK: 'false',
  };
}

/** Undefined when `siteUrl` answers with HTML (the page); otherwise what it answered instead. */
async function siteFailure(siteUrl: string): Promise<string | undefined> {
  try {
    const response = await fetch(siteUrl, { signal: AbortSignal.timeout(10_000) });
    const type = response.headers.get('content-type') ?? '';
    await response.arrayBuffer();
    if (response.ok && type.includes('text/html')) return undefined;
    return `${response.status} ${type}`;
  } catch (error) {
    return String(error);
  }
}
