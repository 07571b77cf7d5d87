// Where the launch check reads its settings: the running local stack's generated files (or the launcher's
// defaults on the GOODY_*_PORT ports), and a project's functions/.env files over the params' defaults.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { localSetup, parseDotenv, projectSetup } from './setup.ts';

const tempRoot = () => mkdtempSync(path.join(tmpdir(), 'goody-doctor-setup-'));

describe('the settings', () => {
  it('reads dotenv lines as the Firebase CLI writes them', () => {
    expect(
      parseDotenv(
        '# a comment\nMAIL_FROM="GOODY <hello@goody.example>"\nexport A=1\nB=\'x # y\'\nC=plain # note\n\nbad line\n',
      ),
    ).toEqual({ MAIL_FROM: 'GOODY <hello@goody.example>', A: '1', B: 'x # y', C: 'plain' });
  });

  it('reads the running stack from the files npm start wrote for it', () => {
    const root = tempRoot();
    const dir = path.join(root, 'dev-stacks', 'stack-5100', 'functions');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, '.env.local'),
      'MAIL_FROM=GOODY <hello@goody.example>\nMAILERLITE_BASE_URL=http://127.0.0.1:3180/api\n',
    );
    writeFileSync(
      path.join(dir, '.secret.local'),
      'SMTP_URL=smtp://127.0.0.1:2625\nMAILERLITE_API_KEY=dev-mailerlite-key\n',
    );
    const setup = localSetup(root, { GOODY_HOSTING_PORT: '5100', GOODY_FIRESTORE_PORT: '8180' });
    expect(setup).toMatchObject({
      mode: 'local',
      projectId: 'demo-goody',
      secrets: { SMTP_URL: 'smtp://127.0.0.1:2625', MAILERLITE_API_KEY: 'dev-mailerlite-key' },
      firestoreEmulatorHost: '127.0.0.1:8180',
    });
    expect(setup.params.MAILERLITE_BASE_URL).toBe('http://127.0.0.1:3180/api');
    expect(setup.source).toContain('dev-stacks/stack-5100/functions');
  });

  it('falls back to the launcher defaults on the GOODY_*_PORT ports when no stack files exist', () => {
    const setup = localSetup(tempRoot(), { GOODY_SMTP_PORT: '2626', GOODY_FUNCTIONS_PORT: '5101' });
    expect(setup.secrets.SMTP_URL).toBe('smtp://127.0.0.1:2626');
    expect(setup.params.UNSUBSCRIBE_URL).toBe('http://127.0.0.1:5101/demo-goody/us-central1/unsubscribe');
    expect(setup.source).toContain('is npm start running?');
  });

  it('reads a project: functions/.env, then functions/.env.<id>, over the defaults; secrets from the reader', async () => {
    const root = tempRoot();
    mkdirSync(path.join(root, 'functions'));
    writeFileSync(
      path.join(root, 'functions', '.env'),
      'MAIL_PER_HOUR=100\nMAILERLITE_GROUP_CLUB=GOODY members\n',
    );
    writeFileSync(
      path.join(root, 'functions', '.env.goody-prod'),
      'MAILERLITE_GROUP_CLUB=139790465506477360\n',
    );
    const setup = await projectSetup(
      root,
      'goody-prod',
      async (name, projectId) => `${name} of ${projectId}`,
    );
    expect(setup.params).toMatchObject({
      MAILERLITE_BASE_URL: 'https://connect.mailerlite.com/api',
      MAILERLITE_GROUP_UPDATES: 'GOODY launch updates',
      MAILERLITE_GROUP_CLUB: '139790465506477360',
      MAIL_PER_HOUR: '100',
    });
    expect(setup.secrets).toEqual({
      SMTP_URL: 'SMTP_URL of goody-prod',
      MAILERLITE_API_KEY: 'MAILERLITE_API_KEY of goody-prod',
    });
    expect(setup.secretProblems).toEqual({});
  });
});
