// Where the launch check reads its settings: the running local stack's generated files, a project's
// functions/.env files (read as the Firebase CLI reads them) over the params' defaults, and secrets set in the
// environment over both.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { localSetup, parseDotenv, projectSetup } from './setup.ts';

const tempRoot = () => mkdtempSync(path.join(tmpdir(), 'goody-doctor-setup-'));

describe('the settings', () => {
  it("reads functions/.env files with the Firebase CLI's own parser: a quoted MAIL_FROM with a comment", () => {
    expect(
      parseDotenv(
        '# a comment\nMAIL_FROM="GOODY <hello@goody.example>" # the sender\nA=1\nB=\'x # y\'\nC=plain # note\n\n',
      ),
    ).toEqual({ MAIL_FROM: 'GOODY <hello@goody.example>', A: '1', B: 'x # y', C: 'plain' });
  });

  it('reads the running stack from the files npm start wrote for it', () => {
    const root = tempRoot();
    const stack = path.join(root, 'dev-stacks', 'stack-5100');
    const dir = path.join(stack, 'functions');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, '.env.local'),
      'MAIL_FROM=GOODY <hello@goody.example>\nMAILERLITE_BASE_URL=http://127.0.0.1:3180/api\n',
    );
    writeFileSync(
      path.join(dir, '.secret.local'),
      'SMTP_URL=smtp://127.0.0.1:2625\nMAILERLITE_API_KEY=dev-mailerlite-key\nUNSUBSCRIBE_SECRET=u\nMAILBOX_KEY_SECRET=m\n',
    );
    writeFileSync(
      path.join(stack, 'firebase.json'),
      JSON.stringify({ emulators: { firestore: { host: '127.0.0.1', port: 8180 } } }),
    );
    const setup = localSetup(root, { GOODY_HOSTING_PORT: '5100' });
    expect(setup).toMatchObject({
      mode: 'local',
      projectId: 'demo-goody',
      secrets: { SMTP_URL: 'smtp://127.0.0.1:2625', MAILERLITE_API_KEY: 'dev-mailerlite-key' },
      secretProblems: {},
      firestoreEmulatorHost: '127.0.0.1:8180',
    });
    expect(setup.params.MAILERLITE_BASE_URL).toBe('http://127.0.0.1:3180/api');
    expect(setup.source).toContain('dev-stacks/stack-5100/functions');
    // Without a port given, the stack whose settings were written last.
    expect(localSetup(root, {}).source).toContain('dev-stacks/stack-5100/functions');
  });

  it('says no stack runs when none wrote its files, and takes the secrets set in the environment', () => {
    const setup = localSetup(tempRoot(), { SMTP_URL: 'smtp://127.0.0.1:2626' });
    expect(setup.secrets).toEqual({ SMTP_URL: 'smtp://127.0.0.1:2626' });
    expect(setup.secretProblems.MAILERLITE_API_KEY).toContain('no running local stack');
    expect(setup.source).toContain('is npm start running?');
    expect(setup.source).toContain('SMTP_URL from the environment');
    expect(setup.source).not.toContain('2626');
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
      'MAILERLITE_GROUP_CLUB=139790465506477360\nMAIL_FROM="GOODY <hello@goody.example>" # who sends\n',
    );
    const asked: string[] = [];
    const setup = await projectSetup(
      root,
      'goody-prod',
      async (name, projectId) => {
        asked.push(name);
        return `${name} of ${projectId}`;
      },
      { SMTP_URL: 'smtps://u:p@relay.example:465' },
    );
    expect(setup.params).toMatchObject({
      MAILERLITE_BASE_URL: 'https://connect.mailerlite.com/api',
      MAILERLITE_GROUP_UPDATES: 'GOODY launch updates',
      MAILERLITE_GROUP_CLUB: '139790465506477360',
      MAIL_PER_HOUR: '100',
      MAIL_FROM: 'GOODY <hello@goody.example>',
    });
    // SMTP_URL from the environment is used, and Secret Manager is not asked for it.
    expect(setup.secrets).toEqual({
      SMTP_URL: 'smtps://u:p@relay.example:465',
      MAILERLITE_API_KEY: 'MAILERLITE_API_KEY of goody-prod',
      UNSUBSCRIBE_SECRET: 'UNSUBSCRIBE_SECRET of goody-prod',
      MAILBOX_KEY_SECRET: 'MAILBOX_KEY_SECRET of goody-prod',
    });
    expect(asked).not.toContain('SMTP_URL');
    expect(setup.secretProblems).toEqual({});
    expect(setup.source).toContain('SMTP_URL from the environment');
  });
});
