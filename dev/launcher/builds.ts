// What gets built before the stack starts, and with which settings. The site's Firebase wiring is fixed at
// build time (Vite inlines VITE_* variables), so the web build must be told this stack's emulator ports.

import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LauncherConfig } from './config.ts';

/** The VITE_* settings the web build reads (web/src/lib/config.ts), for this stack's ports. */
export function viteEnv(config: LauncherConfig): Record<string, string> {
  return {
    VITE_FIREBASE_PROJECT_ID: config.projectId,
    VITE_USE_EMULATORS: 'true',
    VITE_FUNCTIONS_REGION: config.region,
    VITE_FIRESTORE_EMULATOR_HOST: `${config.host}:${config.ports.firestore}`,
    VITE_FUNCTIONS_EMULATOR_HOST: `${config.host}:${config.ports.functions}`,
  };
}

/** What a plain `npm run build -w web` bakes in: the web app's own defaults (the default ports). */
const WEB_DEFAULTS = {
  VITE_FIRESTORE_EMULATOR_HOST: '127.0.0.1:8080',
  VITE_FUNCTIONS_EMULATOR_HOST: '127.0.0.1:5001',
};

export interface Sources {
  /** web/ has something to build (a Vite entry). */
  web: boolean;
  /** functions/ has TypeScript sources and a tsconfig to compile them with. */
  functions: boolean;
}

export function findSources(repoRoot: string): Sources {
  return {
    web: existsSync(path.join(repoRoot, 'web', 'index.html')),
    functions:
      existsSync(path.join(repoRoot, 'functions', 'tsconfig.json')) &&
      existsSync(path.join(repoRoot, 'functions', 'src')),
  };
}

/** The compiled entry the Functions emulator loads (functions/package.json "main"). */
export function functionsEntry(repoRoot: string): string {
  let main = 'lib/index.js';
  try {
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'functions', 'package.json'), 'utf8')) as {
      main?: string;
    };
    if (pkg.main) main = pkg.main;
  } catch {
    // No package.json: the default entry, which will not exist either.
  }
  return path.join(repoRoot, 'functions', main);
}

export function webIndex(repoRoot: string): string {
  return path.join(repoRoot, 'web', 'dist', 'index.html');
}

function stampPath(repoRoot: string): string {
  return path.join(repoRoot, '.dev-data', 'web-build.json');
}

/** Remembers which emulator addresses web/dist was built for, so `npm run emulators` can tell a mismatch. */
export function writeWebBuildStamp(repoRoot: string, env: Record<string, string>): void {
  mkdirSync(path.dirname(stampPath(repoRoot)), { recursive: true });
  writeFileSync(
    stampPath(repoRoot),
    `${JSON.stringify({ builtAt: new Date().toISOString(), env }, null, 2)}\n`,
  );
}

/**
 * Undefined when web/dist talks to this stack's emulators; otherwise a warning saying where it points.
 * Without a stamp (a plain `npm run build -w web`), the web app's defaults are what it was built with.
 */
export function webBuildMismatch(repoRoot: string, wanted: Record<string, string>): string | undefined {
  let built: Record<string, string> = { ...WEB_DEFAULTS };
  try {
    const stamp = JSON.parse(readFileSync(stampPath(repoRoot), 'utf8')) as { env?: Record<string, string> };
    const stampTime = statTime(stampPath(repoRoot));
    // A build made after the stamp (npm run build -w web) has the defaults again.
    if (stamp.env && stampTime >= statTime(webIndex(repoRoot))) built = stamp.env;
  } catch {
    // No stamp: the defaults.
  }
  const differing = (['VITE_FIRESTORE_EMULATOR_HOST', 'VITE_FUNCTIONS_EMULATOR_HOST'] as const).filter(
    (key) => built[key] !== wanted[key],
  );
  if (differing.length === 0) return undefined;
  return (
    `web/dist was built for other emulator addresses (${differing.map((key) => `${key}=${built[key]}`).join(', ')}; ` +
    `this stack uses ${differing.map((key) => wanted[key]).join(', ')}), so the site will not reach this ` +
    'stack. Run `npm start` (it rebuilds) instead of `npm run emulators`.'
  );
}

function statTime(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}
