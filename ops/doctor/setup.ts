// Where the launch check reads its settings. With no project: the running local stack, from the files npm start
// wrote for it (dev-stacks/stack-<page port>/functions/.env.local and .secret.local) or, failing those, the
// values the launcher gives the stand-ins on the GOODY_*_PORT ports. With --project <id>: the params in
// functions/.env and functions/.env.<id> (as the Firebase CLI reads them, over the defaults of
// functions/src/params.ts) and the secrets from Secret Manager through the operator's own Firebase CLI login.

import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { resolvePorts } from '../../dev/launcher/config.ts';
import { stackDirFor } from '../../dev/stack.ts';

export const LOCAL_PROJECT = 'demo-goody';
export const SECRETS = ['SMTP_URL', 'MAILERLITE_API_KEY'] as const;
export type SecretName = (typeof SECRETS)[number];

/** The params' defaults (functions/src/params.ts, DEFAULTS), for the ones a project file leaves out. */
export const PARAM_DEFAULTS: Record<string, string> = {
  MAILERLITE_BASE_URL: 'https://connect.mailerlite.com/api',
  MAILERLITE_GROUP_UPDATES: 'GOODY launch updates',
  MAILERLITE_GROUP_CLUB: 'GOODY Club',
};

export interface DoctorSetup {
  mode: 'local' | 'project';
  projectId: string;
  /** Where the values came from, printed first. */
  source: string;
  params: Record<string, string>;
  secrets: Partial<Record<SecretName, string>>;
  /** Why a secret could not be read, by secret. */
  secretProblems: Partial<Record<SecretName, string>>;
  /** host:port of the local Firestore emulator (local mode). */
  firestoreEmulatorHost?: string;
}

/** KEY=value lines, as functions/.env files hold them: `#` comments, optional quotes. */
export function parseDotenv(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match || line.trim().startsWith('#')) continue;
    let value = match[2] ?? '';
    const quoted = /^(["'])([\s\S]*)\1$/.exec(value);
    if (quoted) value = quoted[1] === '"' ? (quoted[2] ?? '').replace(/\\n/g, '\n') : (quoted[2] ?? '');
    else value = value.replace(/\s+#.*$/, '');
    values[match[1] as string] = value;
  }
  return values;
}

function readDotenv(file: string): Record<string, string> {
  return existsSync(file) ? parseDotenv(readFileSync(file, 'utf8')) : {};
}

export function localSetup(repoRoot: string, env: NodeJS.ProcessEnv): DoctorSetup {
  const ports = resolvePorts(env);
  const host = '127.0.0.1';
  const stackDir = [ports.hosting, ports.vite]
    .map((port) => stackDirFor(repoRoot, port))
    .find((dir) => existsSync(path.join(dir, 'functions', '.env.local')));
  const fallback = {
    params: {
      MAILERLITE_BASE_URL: `http://${host}:${ports.mailerlite}/api`,
      MAILERLITE_GROUP_UPDATES: 'GOODY updates',
      MAILERLITE_GROUP_CLUB: 'GOODY club',
      MAIL_FROM: 'GOODY <hello@goody.example>',
      UNSUBSCRIBE_URL: `http://${host}:${ports.functions}/${LOCAL_PROJECT}/us-central1/unsubscribe`,
    },
    secrets: { MAILERLITE_API_KEY: 'dev-mailerlite-key', SMTP_URL: `smtp://${host}:${ports.smtp}` },
  };
  const params = stackDir ? readDotenv(path.join(stackDir, 'functions', '.env.local')) : {};
  const secrets = stackDir ? readDotenv(path.join(stackDir, 'functions', '.secret.local')) : {};
  return {
    mode: 'local',
    projectId: LOCAL_PROJECT,
    source: stackDir
      ? `the local stack's settings in ${path.relative(repoRoot, stackDir)}/functions`
      : 'the local stack on its default settings (no dev-stacks/ files: is npm start running?)',
    params: { ...PARAM_DEFAULTS, ...fallback.params, ...params },
    secrets: {
      MAILERLITE_API_KEY: secrets.MAILERLITE_API_KEY ?? fallback.secrets.MAILERLITE_API_KEY,
      SMTP_URL: secrets.SMTP_URL ?? fallback.secrets.SMTP_URL,
    },
    secretProblems: {},
    firestoreEmulatorHost: `${host}:${ports.firestore}`,
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
      const lines = cliLines(`${String(stdout ?? '')}\n${String(stderr ?? '')}`);
      const said =
        lines.find((line) => line.startsWith('Error:')) ?? lines.at(-1) ?? (error as Error).message;
      throw new Error(`the Firebase CLI said: ${said.replace(/^Error:\s*/, '')}`);
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
): Promise<DoctorSetup> {
  const functionsDir = path.join(repoRoot, 'functions');
  const file = path.join(functionsDir, `.env.${projectId}`);
  const params = {
    ...PARAM_DEFAULTS,
    ...readDotenv(path.join(functionsDir, '.env')),
    ...readDotenv(file),
  };
  const secrets: DoctorSetup['secrets'] = {};
  const secretProblems: DoctorSetup['secretProblems'] = {};
  for (const name of SECRETS) {
    try {
      secrets[name] = await readSecret(name, projectId);
    } catch (error) {
      secretProblems[name] = `cannot read the secret ${name}: ${(error as Error).message}`;
    }
  }
  return {
    mode: 'project',
    projectId,
    source: `${existsSync(file) ? `functions/.env.${projectId}` : `no functions/.env.${projectId} (params at their defaults)`} and the secrets in Secret Manager`,
    params,
    secrets,
    secretProblems,
  };
}
