import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stackDirFor } from '../stack.ts';
import { resolvePorts } from './config.ts';
import {
  buildEmulatorConfig,
  type EmulatorConfigOptions,
  emulatorIgnore,
  formatDotenv,
  prepareStackDir,
  WATCH_NOTHING,
  writeStackFiles,
} from './stack-files.ts';

// firebase-tools' own dotenv reader is the judge of what the Functions emulator will see.
const require = createRequire(import.meta.url);
const firebaseEnv = require('firebase-tools/lib/functions/env.js') as {
  parseStrict(data: string): Record<string, string>;
};
// The glob library the Functions emulator's watcher matches firebase.json's `ignore` with.
const { Minimatch } = createRequire(require.resolve('firebase-tools/package.json'))('minimatch') as {
  Minimatch: new (pattern: string, options: { dot: boolean }) => { match(path: string): boolean };
};
const { getValidator, getErrorMessage } = require('firebase-tools/lib/firebaseConfigValidate.js') as {
  getValidator: () => ((data: unknown) => boolean) & { errors?: unknown[] | null };
  getErrorMessage: (error: unknown) => string;
};
const repoFirebaseJson = JSON.parse(
  readFileSync(new URL('../../firebase.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

const ports = resolvePorts({
  GOODY_HOSTING_PORT: '15000',
  GOODY_FUNCTIONS_PORT: '15001',
  GOODY_FIRESTORE_PORT: '18080',
  GOODY_HUB_PORT: '14400',
  GOODY_LOGGING_PORT: '14500',
  GOODY_PUBSUB_PORT: '18085',
  GOODY_TASKS_PORT: '19499',
  GOODY_EVENTARC_PORT: '19299',
  GOODY_FIRESTORE_WEBSOCKET_PORT: '19150',
});

const base = {
  hosting: { public: 'web/dist', rewrites: [{ source: '**', destination: '/index.html' }] },
  functions: [{ source: 'functions', codebase: 'default', runtime: 'nodejs22', ignore: ['src'] }],
  firestore: { rules: 'firestore.rules', indexes: 'firestore.indexes.json' },
  emulators: { hosting: { port: 5000 }, functions: { port: 5001 }, ui: { enabled: true } },
};

describe('dotenv files for the Functions emulator', () => {
  it('round-trips awkward values through firebase-tools’ parser', () => {
    const values = {
      MAIL_FROM: 'GOODY <hello@goody.local>',
      WITH_HASH: 'a # not a comment',
      QUOTES: `say "hi" and 'bye'`,
      BACKSLASH: 'C:\\path\\n-not-a-newline',
      NEWLINE: 'line one\nline two',
      EQUALS: 'smtp://user:p=ss@127.0.0.1:2525',
      EMPTY: '',
    };
    const text = formatDotenv(values, 'Written by a test.\nSecond line.');
    expect(text.startsWith('# Written by a test.\n# Second line.\n')).toBe(true);
    expect(firebaseEnv.parseStrict(text)).toEqual(values);
  });

  it('refuses a name that is not a variable name', () => {
    expect(() => formatDotenv({ 'BAD-NAME': 'x' }, '')).toThrow('BAD-NAME');
  });
});

describe('the per-stack firebase config', () => {
  const repoRoot = '/repo';
  const stackDir = stackDirFor(repoRoot, 15000);
  // One stack's options; each test states only what it varies.
  const stackOptions = (overrides: Partial<EmulatorConfigOptions> = {}): EmulatorConfigOptions => ({
    repoRoot,
    stackDir,
    publicDir: path.join(stackDir, 'site'),
    host: '127.0.0.1',
    ports,
    ...overrides,
  });

  it('points back at the repository and carries this stack’s ports, with the Emulator UI off', () => {
    const config = buildEmulatorConfig(base, stackOptions());
    expect(config.hosting).toEqual({ ...base.hosting, public: 'site' });
    // npm start's functions do not reload (below).
    expect(config.functions).toEqual([{ ...base.functions[0], source: 'functions', ignore: ['src', '**'] }]);
    expect(config.emulators).toEqual({
      singleProjectMode: true,
      hub: { host: '127.0.0.1', port: 14400 },
      logging: { host: '127.0.0.1', port: 14500 },
      ui: { enabled: false },
      hosting: { host: '127.0.0.1', port: 15000 },
      firestore: { host: '127.0.0.1', port: 18080, websocketPort: 19150 },
      eventarc: { host: '127.0.0.1', port: 19299 },
      pubsub: { host: '127.0.0.1', port: 18085 },
      functions: { host: '127.0.0.1', port: 15001 },
      tasks: { host: '127.0.0.1', port: 19499 },
    });
    expect(base.hosting.public).toBe('web/dist');
  });

  it('lets this stack’s site connect to its emulators on loopback, leaving the repository’s policy as it is', () => {
    const config = buildEmulatorConfig(repoFirebaseJson, stackOptions());
    const policies = (sitePolicies: unknown) =>
      ((sitePolicies as { headers: { headers: { key: string; value: string }[] }[] }).headers ?? [])
        .flatMap((rule) => rule.headers)
        .filter((header) => header.key === 'Content-Security-Policy')
        .map((header) => header.value);
    const local = policies(config.hosting);
    const production = policies(repoFirebaseJson.hosting);
    expect(local.length).toBeGreaterThan(0);
    expect(local).toHaveLength(production.length);
    for (const [index, policy] of local.entries()) {
      const connect = policy.split('; ').find((directive) => directive.startsWith('connect-src '));
      expect(connect).toBe(
        `${production[index]?.split('; ').find((directive) => directive.startsWith('connect-src '))} http://127.0.0.1:18080 http://127.0.0.1:15001`,
      );
      // Every other directive is untouched.
      expect(policy.split('; ').filter((d) => !d.startsWith('connect-src '))).toEqual(
        production[index]?.split('; ').filter((d) => !d.startsWith('connect-src ')),
      );
    }
    expect(JSON.stringify(repoFirebaseJson)).not.toContain('127.0.0.1:18080');
  });

  it('points at web/dist by a relative path, since the Hosting emulator joins it to the project dir', () => {
    const config = buildEmulatorConfig(base, stackOptions({ publicDir: '/repo/web/dist' }));
    expect(config.hosting).toEqual({ ...base.hosting, public: '../../web/dist' });
  });

  const devOptions = () => stackOptions({ publicDir: undefined, reloadFunctions: true });

  it('runs no Hosting for npm run dev (Vite serves the page), the rest as for npm start', () => {
    const config = buildEmulatorConfig(repoFirebaseJson, devOptions());
    expect(config).not.toHaveProperty('hosting');
    expect(config.emulators).not.toHaveProperty('hosting');
    const withHosting = buildEmulatorConfig(repoFirebaseJson, stackOptions());
    expect({ ...(config.emulators as object), hosting: { host: '127.0.0.1', port: 15000 } }).toEqual(
      withHosting.emulators,
    );
    expect(config.firestore).toEqual(withHosting.firestore);
  });

  /** What firebase-tools' watcher skips of `file` under this config, and why (empty: it sees the file). */
  const ignoredBy = (config: Record<string, unknown>, file: string) => {
    const [codebase] = config.functions as { ignore?: string[] }[];
    // lib/emulator/functionsEmulator.js, createIgnoredFilter: a path with a dot-segment, and each `ignore`
    // pattern as **/<pattern> (minimatch, dot: true), both on the absolute path.
    return [
      ...(/(^|[/\\])\../.test(file) ? ['a dot-segment'] : []),
      ...(codebase?.ignore ?? []).filter((pattern) =>
        new Minimatch(pattern.startsWith('**/') ? pattern : `**/${pattern}`, { dot: true }).match(file),
      ),
    ];
  };

  it("npm run dev: the Functions emulator's watcher sees the compiled code: no dot-directory above it, no ignore pattern over it", () => {
    const config = buildEmulatorConfig(repoFirebaseJson, devOptions());
    const functionsDir = path.join(stackDir, 'functions');
    for (const compiled of [
      'lib',
      'lib/functions',
      'lib/functions/src',
      'lib/functions/src/delivery/deliver-contact.js',
      'lib/contract/src/index.js',
    ]) {
      expect({ compiled, ignoredBy: ignoredBy(config, path.join(functionsDir, compiled)) }).toEqual({
        compiled,
        ignoredBy: [],
      });
    }
    // What firebase.json keeps out of the deploy and the emulator has no reason to watch stays ignored (a
    // directory the watcher skips is not entered).
    expect(ignoredBy(config, path.join(functionsDir, 'lib/functions/src/index.test.js'))).not.toEqual([]);
    expect(ignoredBy(config, path.join(functionsDir, 'test-support'))).not.toEqual([]);
  });

  it("npm start: the watcher stops at the functions directory, so another stack's build reloads nothing here", () => {
    for (const options of [stackOptions(), stackOptions({ publicDir: '/repo/web/dist' })]) {
      const config = buildEmulatorConfig(repoFirebaseJson, options);
      expect(ignoredBy(config, path.join(stackDir, 'functions'))).toEqual([WATCH_NOTHING]);
    }
  });

  it('drops from `ignore` only the patterns naming a directory the compiled entry is in', () => {
    const entry = 'lib/functions/src/index.js';
    expect(
      emulatorIgnore(['node_modules', 'src', '**/src', 'src/', 'src/**', 'bench', '*.log'], entry),
    ).toEqual(['node_modules', 'bench', '*.log']);
    expect(emulatorIgnore(['src'], 'dist/index.js')).toEqual(['src']);
    expect(emulatorIgnore(undefined, entry)).toBeUndefined();
  });

  it('hands the rules to the Firebase Firestore emulator by absolute path, with its ports', () => {
    const config = buildEmulatorConfig(base, stackOptions());
    expect(config.firestore).toEqual({
      rules: '/repo/firestore.rules',
      indexes: '/repo/firestore.indexes.json',
    });
    expect((config.emulators as Record<string, unknown>).firestore).toEqual({
      host: '127.0.0.1',
      port: 18080,
      websocketPort: 19150,
    });
  });

  it("turns the repository's firebase.json into one firebase-tools accepts", () => {
    const validate = getValidator();
    for (const options of [stackOptions(), devOptions()]) {
      const valid = validate(buildEmulatorConfig(repoFirebaseJson, options));
      expect((validate.errors ?? []).map(getErrorMessage)).toEqual([]);
      expect(valid).toBe(true);
    }
  });
});

describe('writing the stack directory', () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('mirrors functions/ by symlinks but src/ (and lib/, copied for npm start) and writes the env files beside them, readable by firebase-tools', () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'goody-stack-files-'));
    const repoRoot = root;
    mkdirSync(path.join(repoRoot, 'functions', 'lib'), { recursive: true });
    mkdirSync(path.join(repoRoot, 'functions', 'src'), { recursive: true });
    writeFileSync(path.join(repoRoot, 'functions', 'package.json'), '{"main":"lib/index.js"}');
    writeFileSync(path.join(repoRoot, 'functions', 'lib', 'index.js'), '');
    writeFileSync(path.join(repoRoot, 'functions', '.env'), 'FROM_REPO=1\n');
    // A hand-written one in the repository must not leak into the emulator's view.
    writeFileSync(path.join(repoRoot, 'functions', '.secret.local'), 'MAILERLITE_API_KEY=real-key\n');
    writeFileSync(path.join(repoRoot, 'firebase.json'), JSON.stringify(base));
    const stackDir = path.join(repoRoot, 'dev-stacks', 'stack-15000');
    mkdirSync(stackDir, { recursive: true });
    writeFileSync(path.join(stackDir, 'left-over-from-last-run'), '');

    prepareStackDir(stackDir);
    const files = writeStackFiles({
      repoRoot,
      stackDir,
      publicDir: path.join(stackDir, 'site'),
      host: '127.0.0.1',
      ports,
      functionsEnv: { MAILERLITE_BASE_URL: 'http://127.0.0.1:13080/api' },
      functionsSecrets: { MAILERLITE_API_KEY: 'dev-mailerlite-key', SMTP_URL: 'smtp://127.0.0.1:12525' },
    });

    expect(files.configPath).toBe(path.join(stackDir, 'firebase.json'));
    expect(
      lstatSync(path.join(stackDir, 'left-over-from-last-run'), { throwIfNoEntry: false }),
    ).toBeUndefined();
    const config = JSON.parse(readFileSync(files.configPath, 'utf8')) as {
      emulators: { hosting: { port: number } };
    };
    expect(config.emulators.hosting.port).toBe(15000);

    const linksBack = (functionsDir: string, entry: string) => {
      const link = path.join(functionsDir, entry);
      return (
        lstatSync(link).isSymbolicLink() &&
        path.resolve(functionsDir, readlinkSync(link)) === path.join(repoRoot, 'functions', entry)
      );
    };
    for (const entry of ['package.json', '.env'])
      expect(linksBack(files.functionsDir, entry), entry).toBe(true);
    // npm start runs the functions as built when it started, whatever a later build writes to functions/lib.
    expect(lstatSync(path.join(files.functionsDir, 'lib')).isDirectory()).toBe(true);
    writeFileSync(path.join(repoRoot, 'functions', 'lib', 'index.js'), '// rebuilt by someone else');
    expect(readFileSync(path.join(files.functionsDir, 'lib', 'index.js'), 'utf8')).toBe('');
    // npm run dev runs functions/lib itself: its emulator reloads what tsc --watch writes there.
    const devStackDir = path.join(repoRoot, 'dev-stacks', 'stack-15173');
    prepareStackDir(devStackDir);
    const dev = writeStackFiles({
      repoRoot,
      stackDir: devStackDir,
      publicDir: undefined,
      host: '127.0.0.1',
      ports,
      reloadFunctions: true,
      functionsEnv: {},
      functionsSecrets: {},
    });
    expect(linksBack(dev.functionsDir, 'lib')).toBe(true);
    // The TypeScript: a save there would reload the emulator before tsc has compiled it.
    expect(lstatSync(path.join(files.functionsDir, 'src'), { throwIfNoEntry: false })).toBeUndefined();
    const secretFile = path.join(files.functionsDir, '.secret.local');
    expect(lstatSync(secretFile).isSymbolicLink()).toBe(false);
    expect(firebaseEnv.parseStrict(readFileSync(secretFile, 'utf8'))).toEqual({
      MAILERLITE_API_KEY: 'dev-mailerlite-key',
      SMTP_URL: 'smtp://127.0.0.1:12525',
    });
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    expect(
      firebaseEnv.parseStrict(readFileSync(path.join(files.functionsDir, '.env.local'), 'utf8')),
    ).toEqual({
      MAILERLITE_BASE_URL: 'http://127.0.0.1:13080/api',
    });
  });
});
