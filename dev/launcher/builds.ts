// What gets built before the stack starts, and with which settings. The site's Firebase wiring is fixed at
// build time (Vite inlines VITE_* variables), so the web build must be told this stack's emulator ports.

import { readFileSync } from 'node:fs';
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

/** The compiled entry the Functions emulator loads (functions/package.json "main"). */
export function functionsEntry(repoRoot: string): string {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'functions', 'package.json'), 'utf8')) as {
    main: string;
  };
  return path.join(repoRoot, 'functions', pkg.main);
}

/** `npm run dev`'s compiler: the functions workspace's own `tsc --watch`, writing functions/lib on every save. */
export const FUNCTIONS_WATCH_ARGS = ['run', 'build:watch', '-w', 'functions'];

/** What tsc --watch prints once a compilation is over, with its error count ("Found 0 errors. Watching ..."). */
export const TSC_WATCH_DONE = /Found (\d+) errors?\. Watching for file changes\./;

/** `npm run dev`'s page: the web workspace's own `vite` (its dev script) on this stack's host and port. */
export function viteDevArgs(host: string, port: number): string[] {
  return ['run', 'dev', '-w', 'web', '--', '--host', host, '--port', String(port), '--strictPort'];
}

/** Arguments of the web build into `outDir` (after the workspace's own `vite build`). */
export function webBuildArgs(outDir: string): string[] {
  return ['run', 'build', '-w', 'web', '--', '--outDir', outDir, '--emptyOutDir'];
}

/** Undefined when a plain `npm run build -w web` (the web app's defaults) reaches this stack; else a warning. */
export function defaultBuildMismatch(wanted: Record<string, string>): string | undefined {
  const differing = (['VITE_FIRESTORE_EMULATOR_HOST', 'VITE_FUNCTIONS_EMULATOR_HOST'] as const).filter(
    (key) => WEB_DEFAULTS[key] !== wanted[key],
  );
  if (differing.length === 0) return undefined;
  return (
    `web/dist talks to the default emulator addresses (${differing.map((key) => WEB_DEFAULTS[key]).join(', ')}), ` +
    `not this stack's (${differing.map((key) => wanted[key]).join(', ')}), so its sign-ups will not reach this ` +
    'stack. Use `npm start`, which builds the site for the ports in use.'
  );
}
