// The whole launch check on a local stack: the stand-ins, the product's own unsubscribe handler behind HTTP,
// the Firestore emulator and a DNS server on loopback. A good setup passes; breaking it fails the run with each
// fix said; a project whose secrets cannot be read says "cannot tell" with the reason, and does not fail for it.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deleteApp, initializeApp } from 'firebase-admin/app';
import { type Firestore, getFirestore } from 'firebase-admin/firestore';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleUnsubscribe, LinkLimiter } from '../../functions/src/http/unsubscribe.ts';
import { UNSUBSCRIBE_SECRET } from '../../functions/test-support/signups.ts';
import { type MailerLiteStandIn, startMailerLiteStandIn } from '../../stand-ins/mailerlite/index.ts';
import { type SmtpOutbox, startSmtpOutbox } from '../../stand-ins/smtp/index.ts';
import {
  type RunningFirestoreEmulator,
  startFirestoreEmulator,
} from '../../tests/support/firestore-emulator.ts';
import { checkDelivery, checkIndexes } from './delivery.ts';
import { type DoctorOptions, runDoctor } from './doctor.ts';
import { dnsResolver } from './domain.ts';
import { type LocalDns, startLocalDns } from './local-dns.ts';
import { exitCode, formatResult } from './report.ts';
import { type DoctorSetup, projectSetup } from './setup.ts';

const repoRoot = path.resolve(import.meta.dirname, '..', '..');

let ml: MailerLiteStandIn;
let outbox: SmtpOutbox;
let dns: LocalDns;
let unsubscribe: Server;
let unsubscribeUrl: string;
let emulator: RunningFirestoreEmulator;
let db: Firestore;
const app = initializeApp(
  { projectId: `demo-doctor-${randomUUID().slice(0, 8)}` },
  `doctor-run-${randomUUID()}`,
);
const groups = { updates: '', club: '' };

beforeAll(async () => {
  [ml, outbox, dns, emulator] = await Promise.all([
    startMailerLiteStandIn({ quiet: true, customFields: ['source'] }),
    startSmtpOutbox({ quiet: true }),
    startLocalDns({
      'goody.example': ['v=spf1 include:spf.relay.example ~all'],
      'spf.relay.example': ['v=spf1 ip4:203.0.113.0/24 -all'],
      '_dmarc.goody.example': ['v=DMARC1; p=quarantine'],
    }),
    startFirestoreEmulator(),
  ]);
  groups.updates = ml.addGroup('GOODY updates');
  groups.club = ml.addGroup('GOODY club');
  // The product's unsubscribe handler, as the Functions emulator serves it.
  const limiter = new LinkLimiter();
  unsubscribe = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    void handleUnsubscribe(
      { method: req.method ?? 'GET', query: Object.fromEntries(url.searchParams) },
      {
        secret: UNSUBSCRIBE_SECRET,
        contact: 'hello@goody.example',
        logger: { info() {}, warn() {}, error() {} } as never,
        limiter,
        now: Date.now,
        erase: async () => ({ mailerLite: 'erased' as never }),
      },
    ).then((response) => res.writeHead(response.status, response.headers).end(response.body));
  });
  await new Promise<void>((resolve) => unsubscribe.listen(0, '127.0.0.1', resolve));
  unsubscribeUrl = `http://127.0.0.1:${(unsubscribe.address() as AddressInfo).port}/demo-goody/us-central1/unsubscribe`;
  process.env.FIRESTORE_EMULATOR_HOST = emulator.hostPort;
  db = getFirestore(app);
  delete process.env.FIRESTORE_EMULATOR_HOST;
  await db
    .collection('email_subscriptions')
    .doc('one')
    .set({
      email: 'kid@school.example',
      delivery: { contact: { state: 'done' }, thank_you: { state: 'pending', reason: 'mail_budget' } },
    });
}, 90_000);

afterAll(async () => {
  await deleteApp(app);
  await new Promise<void>((resolve) => unsubscribe.close(() => resolve()));
  await Promise.all([ml.stop(), outbox.stop(), dns.stop(), emulator.stop()]);
});

function localSetup(changes: Partial<DoctorSetup['params']> = {}): DoctorSetup {
  return {
    mode: 'local',
    projectId: 'demo-goody',
    source: 'the test',
    params: {
      MAILERLITE_BASE_URL: ml.baseUrl,
      MAILERLITE_GROUP_UPDATES: groups.updates,
      MAILERLITE_GROUP_CLUB: groups.club,
      MAIL_FROM: 'GOODY <hello@goody.example>',
      UNSUBSCRIBE_URL: unsubscribeUrl,
      ...changes,
    },
    secrets: { SMTP_URL: outbox.url, MAILERLITE_API_KEY: ml.apiKey },
    secretProblems: {},
  };
}

function run(overrides: Partial<DoctorOptions> = {}) {
  return runDoctor({
    repoRoot,
    setup: localSetup(),
    resolver: dnsResolver([dns.server]),
    firestore: db,
    ...overrides,
  });
}

describe('npm run doctor on the local stack', () => {
  it('passes a good setup; what it cannot read locally says cannot tell; it exits 0', async () => {
    const reported: string[] = [];
    const results = await run({ report: (result) => reported.push(formatResult(result)) });
    const failed = results.filter((result) => result.outcome === 'fail');
    expect(failed, failed.map(formatResult).join('\n')).toEqual([]);
    expect(results.filter((result) => result.outcome === 'cannot tell').map((result) => result.name)).toEqual(
      ['sending domain: DKIM', 'web build: App Check', 'Firestore indexes'],
    );
    expect(exitCode(results)).toBe(0);
    expect(results.find((result) => result.name === 'unsubscribe URL')?.detail).toContain(
      "answers as the product's unsubscribe page does",
    );
    const delivery = results.find((result) => result.name === 'delivery');
    expect(delivery?.lines?.[1]).toContain('waiting 1 (mail_budget 1');
    // Printed as it went, and never an address of a sign-up.
    expect(reported).toHaveLength(results.length);
    expect(reported.join('\n')).not.toMatch(/kid|school\.example/);
    expect(await outbox.messages()).toEqual([]);
  });

  it('fails a broken setup with one fix a check: no DMARC, a wrong group id, no unsubscribe page', async () => {
    delete dns.zone['_dmarc.goody.example'];
    try {
      const results = await run({
        setup: localSetup({
          MAILERLITE_GROUP_CLUB: '139790465506477360',
          UNSUBSCRIBE_URL: `${ml.baseUrl}/unsubscribe`,
        }),
      });
      const failed = results.filter((result) => result.outcome === 'fail');
      expect(failed.map((result) => result.name)).toEqual([
        'sending domain: DMARC',
        'MailerLite: MAILERLITE_GROUP_CLUB',
        'unsubscribe URL',
      ]);
      for (const result of failed) expect(result.fix, result.name).toMatch(/\S/);
      expect(exitCode(results)).toBe(1);
    } finally {
      dns.zone['_dmarc.goody.example'] = ['v=DMARC1; p=quarantine'];
    }
  });

  it('--send-test sends one thank-you, with the one-click header and List-Id, and says what to read', async () => {
    const results = await run({ sendTo: 'operator@goody.example' });
    const sent = results.at(-1);
    expect(sent).toMatchObject({ name: 'send test', outcome: 'pass' });
    expect(sent?.lines?.join('\n')).toContain('List-Unsubscribe and List-Unsubscribe-Post');
    const [message] = await outbox.messages();
    expect(message?.envelope.to).toEqual(['operator@goody.example']);
    expect(message?.headers['list-unsubscribe']).toBe(`<${unsubscribeUrl}?a=launch-check&t=launch-check>`);
    expect(message?.headers['list-id']).toBe('GOODY pre-launch list <prelaunch.goody.example>');
    await outbox.clear();
  });
});

describe('npm run doctor -- --project <id>', () => {
  it('reads functions/.env.<id>, and cannot tell what needs secrets it cannot read, without failing for it', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'goody-doctor-'));
    mkdirSync(path.join(root, 'functions'));
    writeFileSync(
      path.join(root, 'functions', '.env.goody-test'),
      `# params\nMAIL_FROM="GOODY <hello@goody.example>"\nUNSUBSCRIBE_URL=${unsubscribeUrl}\nMAILERLITE_GROUP_UPDATES=1\n`,
    );
    const setup = await projectSetup(root, 'goody-test', async () => {
      throw new Error('Failed to authenticate, have you run firebase login?');
    });
    expect(setup.params).toMatchObject({
      MAIL_FROM: 'GOODY <hello@goody.example>',
      MAILERLITE_GROUP_UPDATES: '1',
      MAILERLITE_GROUP_CLUB: 'GOODY Club',
    });
    const results = await run({ setup, firestore: null, firestoreMissing: 'no credentials (test)' });
    const byName = (name: string) => results.find((result) => result.name === name);
    expect(byName('SMTP relay')).toMatchObject({ outcome: 'cannot tell' });
    expect(byName('SMTP relay')?.detail).toContain('have you run firebase login');
    expect(byName('MailerLite: key')).toMatchObject({ outcome: 'cannot tell' });
    // A real project's unsubscribe URL must be https; web/dist is checked for App Check.
    expect(byName('unsubscribe URL')).toMatchObject({ outcome: 'fail' });
    expect(byName('unsubscribe URL')?.detail).toContain('is not https');
    expect(byName('delivery')).toMatchObject({ outcome: 'cannot tell', detail: 'no credentials (test)' });
  });
});

describe('where delivery stands, read from Firestore', () => {
  const done = { state: 'done', attempts: 1, round: 0 };
  const pending = (reason: string) => ({ state: 'pending', reason, attempts: 1, round: 0 });
  const skipped = (reason: string) => ({ state: 'skipped', reason, attempts: 1, round: 0 });
  // A project of its own in the same emulator, so only these rows are there.
  const own = initializeApp(
    { projectId: `demo-doctor-${randomUUID().slice(0, 8)}` },
    `doctor-rows-${randomUUID()}`,
  );
  let rowsDb: Firestore;
  beforeAll(() => {
    process.env.FIRESTORE_EMULATOR_HOST = emulator.hostPort;
    rowsDb = getFirestore(own);
    delete process.env.FIRESTORE_EMULATOR_HOST;
  });
  afterAll(() => deleteApp(own));

  it('matches the rows stored, and prints no address', async () => {
    const rows = [
      { email: 'kid.one@school.example', delivery: { contact: done, thank_you: done } },
      { email: 'kid.two@school.example', delivery: { contact: done, thank_you: skipped('already_thanked') } },
      {
        email: 'parent@family.example',
        delivery: { contact: skipped('refused'), thank_you: pending('mail_budget') },
      },
      { email: 'late@family.example' },
    ];
    for (const [index, row] of rows.entries()) {
      await rowsDb
        .collection('email_subscriptions')
        .doc(`row-${index}`)
        .set({
          ...row,
          subscription_type: 'updates',
          source: 'hero_form',
          created_at: new Date(),
          mailbox_key: `key-${index}`,
        });
    }
    const result = await checkDelivery(rowsDb, Date.now());
    expect(result.outcome).toBe('pass');
    expect(result.detail).toBe('4 sign-ups');
    expect(result.lines).toEqual([
      'not yet reached by the sign-up trigger: 1, oldest 0 min',
      'contact:    done 2 · skipped 1 (refused 1) · waiting 0',
      'thank-you:  done 1 · skipped 1 (already_thanked 1) · waiting 1 (mail_budget 1, oldest 0 min)',
    ]);
    const printed = JSON.stringify(result);
    expect(printed).not.toMatch(/@|school|family|kid|parent|key-/);
    // The emulator serves the reconciler's query without an index: it cannot tell.
    expect((await checkIndexes(rowsDb, { emulator: true })).outcome).toBe('cannot tell');
  });
});
