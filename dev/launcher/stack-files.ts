// The files firebase-tools reads, generated per stack under dev-stacks/stack-<page port>/ (config.ts, stackDirFor):
//
//   firebase.json   the repository's firebase.json with this stack's ports (passed with --config); firebase-tools
//                   resolves the hosting public dir and the functions source against its directory
//   site/           the site built for this stack's ports (npm start; npm run emulators serves web/dist; npm run
//                   dev has no Hosting)
//   functions/      the functions as the emulator sees them: a symlink to each entry of functions/ but src/ (npm
//                   start copies lib/, see writeStackFiles), plus .env.local (the string params) and
//                   .secret.local (the secrets; without it the emulator asks Google Secret Manager)
//
// Per-stack copies, not functions/.env.local and web/dist: the emulator rereads .secret.local for each worker and
// the site's ports are baked in at build time, so a second stack writing there would reroute the first one's.
//
// Under `npm run dev` the Functions emulator's watcher (chokidar, following the symlinks) reloads the functions
// when tsc --watch rewrites lib/. It drops every path with a dot-segment (hence dev-stacks/, dev/stack.ts) and
// applies firebase.json's deploy `ignore` as `**/<pattern>`, so `src` hid lib/functions/src (emulatorIgnore).

import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { mapPolicies, withBuildPolicies } from '../../web/plugins/build-policies.ts';
import type { Ports } from './config.ts';

/**
 * Not linked from functions/: the files the launcher writes there, and the TypeScript sources (the emulator runs
 * lib/, and a save in src/ seen by its watcher would reload the functions before tsc has written anything).
 */
const NOT_LINKED = new Set(['.env.local', '.secret.local', 'src']);

const DOTENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const DOTENV_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '"': '\\"',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
};

/**
 * A dotenv file in the dialect firebase-tools parses (lib/functions/env.js): every value double-quoted, so
 * spaces, `#`, `<` and quotes survive, with the escapes that dialect undoes inside double quotes.
 */
export function formatDotenv(values: Record<string, string>, header: string): string {
  const lines = header
    .split('\n')
    .filter(Boolean)
    .map((line) => `# ${line}`);
  for (const [key, value] of Object.entries(values)) {
    if (!DOTENV_KEY.test(key)) throw new Error(`Not a valid environment variable name: ${key}`);
    lines.push(`${key}="${value.replace(/[\\"\n\r\t\v]/g, (char) => DOTENV_ESCAPES[char] ?? char)}"`);
  }
  return `${lines.join('\n')}\n`;
}

type JsonObject = Record<string, unknown>;

/** An `ignore` pattern that stops the Functions emulator's watcher at the functions directory (reloadFunctions). */
export const WATCH_NOTHING = '**';

/** functions/package.json's "main", relative to functions/ (builds.ts reads the real one). */
const DEFAULT_COMPILED_ENTRY = 'lib/functions/src/index.js';

export interface EmulatorConfigOptions {
  repoRoot: string;
  stackDir: string;
  /** The built site the Hosting emulator serves (absolute); none for `npm run dev`, which runs no Hosting. */
  publicDir: string | undefined;
  host: string;
  ports: Ports;
  /** What the emulator loads, relative to functions/ (its package.json "main"; builds.ts, functionsEntry). */
  compiledEntry?: string;
  /**
   * npm run dev: the emulator reloads the functions whenever functions/lib changes. Otherwise it watches nothing
   * and runs a copy of functions/lib made at its start: a stack under test or measurement must not reload (a
   * request at that moment can fail to load its function) because another stack or a build rewrote it.
   */
  reloadFunctions?: boolean;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// firebase.json's deploy `ignore` without the patterns that name a directory the compiled code lives in: tsc
// writes to lib/functions/src and lib/contract/src (functions/tsconfig.json's rootDir is the repository), which
// `src` as `**/src` hid from the watcher. The emulator's view links no src/ (NOT_LINKED).
export function emulatorIgnore(ignore: unknown, compiledEntry: string): unknown {
  if (!Array.isArray(ignore)) return ignore;
  const compiledDirs = new Set(path.dirname(compiledEntry).split(/[\\/]/));
  return ignore.filter((pattern) => {
    if (typeof pattern !== 'string') return true;
    const name = pattern.replace(/^(\*\*\/)+/, '').replace(/(\/\*\*)?\/?$/, '');
    return !compiledDirs.has(name);
  });
}

/**
 * The repository's firebase.json (not modified) rewritten for one stack, serving the site in `publicDir` with the
 * policies that build wrote (web/plugins/content-security-policy.ts); without `publicDir` (npm run dev), no hosting.
 */
export function buildEmulatorConfig(base: JsonObject, options: EmulatorConfigOptions): JsonObject {
  const { repoRoot, stackDir, host, ports, publicDir } = options;
  const config = publicDir === undefined ? structuredClone(base) : withBuildPolicies(base, publicDir);
  // Relative, not absolute: the hosting emulator (superstatic) joins the project dir and the public dir
  // whatever the latter is, so an absolute public dir serves nothing.
  const fromStack = (repoPath: string) => path.relative(stackDir, path.resolve(repoRoot, repoPath)) || '.';

  if (publicDir === undefined) {
    delete config.hosting;
  } else {
    for (const site of Array.isArray(config.hosting) ? config.hosting : [config.hosting]) {
      if (isObject(site) && typeof site.public === 'string') site.public = fromStack(publicDir);
    }
    // The production policy lets the page connect only to Google's endpoints; this stack's site talks to the
    // emulators on loopback, so they join connect-src here and never in firebase.json.
    const emulators = `http://${host}:${ports.firestore} http://${host}:${ports.functions}`;
    mapPolicies(config, (policy) =>
      policy
        .split(';')
        .map((directive) => directive.trim())
        .map((directive) =>
          directive.split(/\s+/)[0] === 'connect-src' ? `${directive} ${emulators}` : directive,
        )
        .join('; '),
    );
  }

  const codebases = Array.isArray(config.functions) ? config.functions : [config.functions];
  const local = codebases.filter(
    (entry): entry is JsonObject => isObject(entry) && typeof entry.source === 'string',
  );
  if (local.length !== 1) {
    throw new Error(`firebase.json should have exactly one local functions codebase, found ${local.length}`);
  }
  const codebase = local[0] as JsonObject;
  codebase.source = 'functions';
  if (options.reloadFunctions) {
    if ('ignore' in codebase) {
      codebase.ignore = emulatorIgnore(codebase.ignore, options.compiledEntry ?? DEFAULT_COMPILED_ENTRY);
    }
  } else {
    // `**`, as the watcher reads it (`**/**`), matches the functions directory itself: nothing is watched.
    codebase.ignore = [...(Array.isArray(codebase.ignore) ? codebase.ignore : []), WATCH_NOTHING];
  }

  if (isObject(config.firestore)) {
    // The emulator reads these through firebase-tools' Config.path(), which refuses `..` but takes absolute paths.
    for (const key of ['rules', 'indexes']) {
      const value = config.firestore[key];
      if (typeof value === 'string') config.firestore[key] = path.resolve(repoRoot, value);
    }
  }

  config.emulators = {
    singleProjectMode: true,
    hub: { host, port: ports.hub },
    logging: { host, port: ports.logging },
    // The Emulator UI would be downloaded from the internet on first use.
    ui: { enabled: false },
    ...(publicDir === undefined ? {} : { hosting: { host, port: ports.hosting } }),
    // The websocket serves only the UI, but firebase-tools binds it all the same; left to firebase-tools it is
    // picked at start, and two stacks starting at once could pick the same one.
    firestore: { host, port: ports.firestore, websocketPort: ports.firestoreWebsocket },
    eventarc: { host, port: ports.eventarc },
    // Pub/Sub carries the scheduled functions' triggers (topic firebase-schedule-<name>).
    pubsub: { host, port: ports.pubsub },
    functions: { host, port: ports.functions },
    // The task queues the functions enqueue to (firebase-admin reads CLOUD_TASKS_EMULATOR_HOST, which the
    // Functions emulator sets when this one runs).
    tasks: { host, port: ports.tasks },
  };
  return config;
}

export interface WriteStackFilesOptions extends EmulatorConfigOptions {
  /** String params for the functions (functions/.env.local as the emulator sees it). */
  functionsEnv: Record<string, string>;
  /** Secret params (functions/.secret.local as the emulator sees it). */
  functionsSecrets: Record<string, string>;
}

/** Empties the stack directory, once the port check has shown that no running stack uses its page's port. */
export function prepareStackDir(stackDir: string): void {
  rmSync(stackDir, { recursive: true, force: true });
  mkdirSync(stackDir, { recursive: true });
}

/** Writes the firebase config and the functions directory the emulator sees (the stack directory must exist). */
export function writeStackFiles(options: WriteStackFilesOptions): {
  configPath: string;
  functionsDir: string;
} {
  const { repoRoot, stackDir } = options;

  const base = JSON.parse(readFileSync(path.join(repoRoot, 'firebase.json'), 'utf8')) as JsonObject;
  const configPath = path.join(stackDir, 'firebase.json');
  writeFileSync(configPath, `${JSON.stringify(buildEmulatorConfig(base, options), null, 2)}\n`);

  const functionsDir = path.join(stackDir, 'functions');
  rmSync(functionsDir, { recursive: true, force: true });
  const sourceDir = path.join(repoRoot, 'functions');
  mkdirSync(functionsDir);
  // npm start runs the functions as built at its start: a copy of the compiled output, since every new worker
  // process loads it from disk again, and functions/lib is rewritten by any build in the checkout (npm run dev's
  // tsc --watch on every save). npm run dev runs functions/lib itself, and reloads when it changes.
  const compiledRoot = (options.compiledEntry ?? DEFAULT_COMPILED_ENTRY).split(/[\\/]/)[0];
  for (const entry of readdirSync(sourceDir)) {
    if (NOT_LINKED.has(entry)) continue;
    if (entry === compiledRoot && !options.reloadFunctions) {
      cpSync(path.join(sourceDir, entry), path.join(functionsDir, entry), { recursive: true });
      continue;
    }
    symlinkSync(path.relative(functionsDir, path.join(sourceDir, entry)), path.join(functionsDir, entry));
  }
  const header = `Written by npm start / npm run dev (dev/launcher) for this stack only; rewritten on every start.`;
  writeFileSync(path.join(functionsDir, '.env.local'), formatDotenv(options.functionsEnv, header));
  writeFileSync(path.join(functionsDir, '.secret.local'), formatDotenv(options.functionsSecrets, header), {
    mode: 0o600,
  });
  return { configPath, functionsDir };
}
