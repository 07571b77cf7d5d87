// Where the launch check reads its settings. With no project: the running local stack, from the files npm start
// wrote for it (dev-stacks/stack-<page port>/: functions/.env.local, functions/.secret.local and the stack's
// firebase.json for the Firestore emulator's port). With --project <id>: the params in functions/.env and
// functions/.env.<id> (read by the Firebase CLI's own parser, over the defaults of functions/src/params.ts) and the
// secrets from Secret Manager through the operator's own Firebase CLI login. Either way a secret set in the
// environment (SMTP_URL=… npm run doctor) is used instead, so a relay can be checked before it is stored.

import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEFAULTS } from '../../functions/src/params.ts';

export const LOCAL_PROJECT = 'demo-goody';
export const SECRETS = [
  'SMTP_URL',
  'MAILERLITE_API_KEY',
  'UNSUBSCRIBE_SECRET',
  'MAILBOX_KEY_SECRET',
] as const;
export type SecretName = (typeof SECRETS)[number];

/** The params' defaults (functions/src/params.ts), for the ones a project file leaves out. */
export const PARAM_DEFAULTS: Record<string, string> = Object.fromEntries(
  Object.entries(DEFAULTS).map(([name, value]) => [name, String(value)]),
);

/** Where npm start writes a stack's files (dev/stack.ts, STACKS_DIR). */
const STACKS_DIR = 'dev-stacks';

export interface DoctorSetup {
  mode: 'local' | 'project';
  projectId: string;
  /** Where the values came from, printed first. */
  source: string;
  params: Record<string, string>;
  secrets: Partial<Record<SecretName, string>>;
  /** Why a secret could not be read, by secret. */
  secretProblems: Partial<Record<SecretName, string>>;
  /** host:port of the local stack's Firestore emulator (local mode, when a stack was found). */
  firestoreEmulatorHost?: string;
}

// firebase-tools has no public module for its .env parser (its package declares no exports and documents no
// API); the deploy reads functions/.env.<id> with lib/functions/env.js's parse, so this file is loaded by path
// to read the files exactly as the deploy does.
const firebaseEnv = createRequire(import.meta.url)('firebase-tools/lib/functions/env.js') as {
  parse(data: string): { envs: Record<string, string>; errors: string[] };
};

/** A functions/.env file as the Firebase CLI reads it (`#` comments, quotes, escapes). */
export function parseDotenv(text: string): Record<string, string> {
  return firebaseEnv.parse(text).envs;
}

function readDotenv(file: string): Record<string, string> {
  return existsSync(file) ? parseDotenv(readFileSync(file, 'utf8')) : {};
}

/** The secrets set in the environment, which the doctor uses instead of Secret Manager's or the stack's. */
export function secretsFromEnv(env: NodeJS.ProcessEnv): DoctorSetup['secrets'] {
  const secrets: DoctorSetup['secrets'] = {};
  for (const name of SECRETS) {
    const value = env[name]?.trim();
    if (value) secrets[name] = value;
  }
  return secrets;
}

const fromEnvNote = (secrets: DoctorSetup['secrets']) => {
  const names = Object.keys(secrets);
  return names.length > 0 ? `; ${names.join(', ')} from the environment` : '';
};

/**
 * The running stack's folder: the one of GOODY_HOSTING_PORT or GOODY_VITE_PORT when given, else the one whose
 * settings npm start wrote last.
 */
function findStackDir(repoRoot: string, env: NodeJS.ProcessEnv): string | undefined {
  const root = path.join(repoRoot, STACKS_DIR);
  const settings = (dir: string) => path.join(dir, 'functions', '.env.local');
  const named = [env.GOODY_HOSTING_PORT, env.GOODY_VITE_PORT]
    .map((port) => port?.trim())
    .filter((port): port is string => Boolean(port))
    .map((port) => path.join(root, `stack-${port}`));
  if (named.length > 0) return named.find((dir) => existsSync(settings(dir)));
  if (!existsSync(root)) return undefined;
  return readdirSync(root)
    .map((name) => path.join(root, name))
    .filter((dir) => existsSync(settings(dir)))
    .sort((a, b) => statSync(settings(b)).mtimeMs - statSync(settings(a)).mtimeMs)[0];
}

/** The Firestore emulator's host:port in a firebase.json (a stack's, or the repository's). */
function firestoreEmulatorHost(configFile: string): string | undefined {
  try {
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as {
      emulators?: { firestore?: { host?: string; port?: number } };
    };
    const firestore = config.emulators?.firestore;
    return firestore?.port ? `${firestore.host ?? '127.0.0.1'}:${firestore.port}` : undefined;
  } catch {
    return undefined;
  }
}

export function localSetup(repoRoot: string, env: NodeJS.ProcessEnv): DoctorSetup {
  const stackDir = findStackDir(repoRoot, env);
  const fromEnv = secretsFromEnv(env);
  const params = stackDir ? readDotenv(path.join(stackDir, 'functions', '.env.local')) : {};
  const stored = stackDir ? readDotenv(path.join(stackDir, 'functions', '.secret.local')) : {};
  const secrets: DoctorSetup['secrets'] = {};
  const secretProblems: DoctorSetup['secretProblems'] = {};
  for (const name of SECRETS) {
    const value = fromEnv[name] ?? stored[name];
    if (value) secrets[name] = value;
    else if (!stackDir) secretProblems[name] = 'no running local stack: dev-stacks/ holds no settings';
  }
  return {
    mode: 'local',
    projectId: LOCAL_PROJECT,
    source: `${
      stackDir
        ? `the local stack's settings in ${path.relative(repoRoot, stackDir)}/functions`
        : 'no local stack (dev-stacks/ holds no settings: is npm start running?)'
    }${fromEnvNote(fromEnv)}`,
    params: { ...PARAM_DEFAULTS, ...params },
    secrets,
    secretProblems,
    // No stack, no emulator of ours to read (another program may listen on the default port).
    firestoreEmulatorHost: stackDir
      ? (firestoreEmulatorHost(path.join(stackDir, 'firebase.json')) ??
        firestoreEmulatorHost(path.join(repoRoot, 'firebase.json')))
      : undefined,
  };
}

/** Reads one secret's current version; throws with the CLI's own words when it cannot. */
export type SecretReader = (name: SecretName, projectId: string) => Promise<string>;

/** `firebase functions:secrets:access`, with the operator's Firebase CLI login (firebase login). */
export function firebaseCliSecretReader(repoRoot: string): SecretReader {
  const run = promisify(execFile);
  const cli = path.join(
    repoRoot,
    'node_modules',
    '.bin',
    process.platform === 'win32' ? 'firebase.cmd' : 'firebase',
  );
  return async (name, projectId) => {
    try {
      const { stdout } = await run(
        cli,
        ['functions:secrets:access', name, '--project', projectId, '--non-interactive'],
        {
          cwd: repoRoot,
          timeout: 60_000,
          maxBuffer: 1024 * 1024,
        },
      );
      // The CLI prints its notices (⚠ …) on stdout too; the secret is its last line (ours are one line each).
      const value = cliLines(stdout).at(-1);
      if (!value) throw new Error('the Firebase CLI printed no value');
      return value;
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: unknown; stderr?: unknown };
      // Only the CLI's own `Error:` line is passed on: any other line it printed may be the secret's value.
      const lines = cliLines(`${String(stdout ?? '')}\n${String(stderr ?? '')}`);
      const said = lines.find((line) => line.startsWith('Error:'))?.replace(/^Error:\s*/, '');
      throw new Error(said ? `the Firebase CLI said: ${said}` : 'the Firebase CLI could not read it');
    }
  };
}

function cliLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !/^(⚠|i\s|✔|✖)/u.test(line));
}

export async function projectSetup(
  repoRoot: string,
  projectId: string,
  readSecret: SecretReader,
  env: NodeJS.ProcessEnv = {},
): Promise<DoctorSetup> {
  const functionsDir = path.join(repoRoot, 'functions');
  const file = path.join(functionsDir, `.env.${projectId}`);
  const params = {
    ...PARAM_DEFAULTS,
    ...readDotenv(path.join(functionsDir, '.env')),
    ...readDotenv(file),
  };
  const fromEnv = secretsFromEnv(env);
  const secrets: DoctorSetup['secrets'] = { ...fromEnv };
  const secretProblems: DoctorSetup['secretProblems'] = {};
  for (const name of SECRETS) {
    if (fromEnv[name]) continue;
    try {
      secrets[name] = await readSecret(name, projectId);
    } catch (error) {
      secretProblems[name] = `cannot read the secret ${name}: ${(error as Error).message}`;
    }
  }
  return {
    mode: 'project',
    projectId,
    source: `${existsSync(file) ? `functions/.env.${projectId}` : `no functions/.env.${projectId} (params at their defaults)`} and the secrets in Secret Manager${fromEnvNote(fromEnv)}`,
    params,
    secrets,
    secretProblems,
  };
}
