// Another commit's site beside this one's, on the stack bench:signup started, for a comparison in one sitting
// (`npm run bench:signup -- --against <checkout>`). The checkout is a plain copy of that commit's files:
//
//   mkdir /tmp/goody-2f21e74 && git archive 2f21e74 | tar -x -C /tmp/goody-2f21e74
//
// Its site is built with that commit's own settings for this stack's emulators (its dev/launcher/builds.ts
// viteEnv, as its `npm start` would) and with this repository's node_modules (linked in, not installed:
// compare the two package-lock.json files, a warning says when they differ). It is served on loopback the way
// that commit's `npm start` would serve it: its own firebase.json turned into the emulator config by its own
// dev/launcher/stack-files.ts (so its Content-Security-Policy allows its own bootstrap's hash and this stack's
// emulators), by superstatic, the engine of the Hosting emulator. Superstatic serves no function rewrite: a
// commit whose page calls the functions through Hosting cannot be the other build (a warning says so).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { StackInfo } from '../e2e/support/stack.ts';
import { repoRoot } from './paths.ts';
import { type HostedSite, serveLikeHosting } from './web/hosting.ts';

type Json = Record<string, unknown>;

/**
 * The checkout's node_modules, unless it has one: a link to each of this repository's packages (and .bin, so
 * its npm scripts run too), its own workspaces for @goody.
 */
export function linkNodeModules(checkout: string): void {
  const target = path.join(checkout, 'node_modules');
  if (existsSync(target)) return;
  mkdirSync(target);
  const ours = path.join(repoRoot, 'node_modules');
  for (const entry of readdirSync(ours)) {
    // Caches stay out: Vite and others write there.
    if (entry === '.vite' || entry === '.cache') continue;
    if (entry === '@goody') {
      mkdirSync(path.join(target, entry));
      for (const workspace of readdirSync(path.join(ours, entry))) {
        if (existsSync(path.join(checkout, workspace)))
          symlinkSync(path.join('..', '..', workspace), path.join(target, entry, workspace));
      }
    } else {
      symlinkSync(path.join(ours, entry), path.join(target, entry));
    }
  }
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** The launcher's settings for `stack`, as far as the site's build and its hosting config read them. */
function launcherConfigFor(checkout: string, stack: StackInfo) {
  return {
    repoRoot: checkout,
    host: '127.0.0.1',
    projectId: new URL(stack.functionsUrl).pathname.split('/')[1] as string,
    region: new URL(stack.functionsUrl).pathname.split('/')[2] as string,
    ports: {
      hosting: portOf(stack.siteUrl),
      functions: portOf(stack.functionsEmulatorUrl),
      firestore: portOf(stack.firestoreUrl),
      mailerlite: portOf(stack.mailerLiteUrl),
      smtpApi: portOf(stack.smtpApiUrl),
      hub: portOf(stack.hubUrl),
      pubsub: 0,
      tasks: 0,
      smtp: 0,
      logging: 0,
    },
  };
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve()
        : reject(
            new Error(`${command} ${args.join(' ')} in ${cwd} failed (${code}):\n${output.slice(-3000)}`),
          ),
    );
  });
}

/**
 * Builds `checkout`'s site for `stack` into `outDir` and serves it like that commit's `npm start` would.
 * `log` receives what it does and any warning.
 */
export async function serveOtherBuild(
  checkout: string,
  stack: StackInfo,
  outDir: string,
  log: (line: string) => void,
): Promise<HostedSite> {
  const root = path.resolve(checkout);
  for (const file of [
    'firebase.json',
    'web/vite.config.ts',
    'dev/launcher/builds.ts',
    'dev/launcher/stack-files.ts',
  ])
    if (!existsSync(path.join(root, file))) throw new Error(`--against ${checkout}: no ${file} there`);
  const lock = (dir: string) => readFileSync(path.join(dir, 'package-lock.json'), 'utf8');
  if (existsSync(path.join(root, 'package-lock.json')) && lock(root) !== lock(repoRoot))
    log(
      `   WARNING: ${checkout}'s package-lock.json differs from this one's; it is built with this one's packages`,
    );
  linkNodeModules(root);

  const config = launcherConfigFor(root, stack);
  const builds = (await import(pathToFileURL(path.join(root, 'dev/launcher/builds.ts')).href)) as {
    viteEnv(config: unknown): Record<string, string>;
  };
  log(`   building ${checkout}'s site for this stack (vite build, its own settings)`);
  await run(
    process.execPath,
    [path.join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', '--outDir', outDir, '--emptyOutDir'],
    path.join(root, 'web'),
    { ...process.env, ...builds.viteEnv(config), NODE_ENV: 'production' },
  );

  const stackFiles = (await import(pathToFileURL(path.join(root, 'dev/launcher/stack-files.ts')).href)) as {
    buildEmulatorConfig(base: Json, options: Json): Json;
  };
  const base = JSON.parse(readFileSync(path.join(root, 'firebase.json'), 'utf8')) as Json;
  const emulatorConfig = stackFiles.buildEmulatorConfig(base, {
    repoRoot: root,
    stackDir: path.join(outDir, '..'),
    publicDir: outDir,
    host: config.host,
    ports: config.ports,
  });
  const hosting = (
    Array.isArray(emulatorConfig.hosting) ? emulatorConfig.hosting[0] : emulatorConfig.hosting
  ) as Json;
  if (JSON.stringify(hosting.rewrites ?? []).match(/"(function|run)"/))
    log(`   WARNING: ${checkout}'s hosting rewrites to functions, which this server does not serve`);
  return serveLikeHosting(outDir, hosting);
}

// `npx tsx tests/bench/other-build.ts <commit> <dir>`: a copy of <commit>'s files in <dir> (git archive, which
// touches neither this work tree nor its index), with node_modules linked as above: what --against takes, and
// a place to run that commit's own bench from.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [commit, dir] = process.argv.slice(2);
  if (!commit || !dir) throw new Error('usage: npx tsx tests/bench/other-build.ts <commit> <dir>');
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} is not empty`);
  mkdirSync(dir, { recursive: true });
  await run(
    'sh',
    ['-c', `git archive --format=tar "$0" | tar -x -C "$1"`, commit, path.resolve(dir)],
    repoRoot,
    process.env,
  );
  linkNodeModules(dir);
  console.log(`${commit} in ${dir}, node_modules linked to ${path.join(repoRoot, 'node_modules')}`);
}
