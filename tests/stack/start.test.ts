// `npm start` as a developer runs it: a child process on ports of its own, driven over HTTP like the site and
// the e2e suite drive it, then stopped the way Ctrl-C stops it.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackDirFor } from '../../dev/stack.ts';
import { pressOneClick } from '../support/one-click.ts';
import {
  freeStackPorts,
  isPortFree,
  type LauncherRun,
  launchStack,
  portEnv,
  repoRoot,
  runLauncher,
  type StackPorts,
} from './launcher-process.ts';
import { pageDocumentId, storeSignupAsThePage } from './page-writes.ts';
import { READY_BANNER, sharedStack } from './shared-stack.ts';

// It builds the site and the functions first: generous, since a cold machine is slow.
const START_TIMEOUT_MS = 150_000;
const STOP_TIMEOUT_MS = 30_000;

const stackDirOf = (ports: StackPorts) => stackDirFor(repoRoot, ports.GOODY_HOSTING_PORT);
const webDistIndex = path.join(repoRoot, 'web', 'dist', 'index.html');

interface Banner {
  siteUrl: string;
  adminUrl: string;
  mailLine: string;
  smtpApiUrl: string;
  mailerLiteBaseUrl: string;
  firestoreLine: string;
  firestoreHostPort: string;
  pubsubLine: string;
  tasksLine: string;
}

function parseBanner(output: string): Banner {
  const field = (name: string, pattern: RegExp): RegExpExecArray => {
    const match = pattern.exec(output);
    if (!match) throw new Error(`no ${name} line in:\n${output.slice(-3000)}`);
    return match;
  };
  const mail = field('Mail', /^ {2}Mail {8}(.*listed at (http:\/\/\S+))$/m);
  const firestore = field('Firestore', /^ {2}Firestore {3}(.* at (127\.0\.0\.1:\d+)[;,].*)$/m);
  const pubsub = field('Pub/Sub', /^ {2}Pub\/Sub {5}(.*)$/m);
  const tasks = field('Tasks', /^ {2}Tasks {7}(.*)$/m);
  return {
    siteUrl: field('Site', /^ {2}Site {8}(http:\/\/\S+)$/m)[1] as string,
    adminUrl: field('Admin', /^ {2}Admin {7}(http:\/\/\S+)$/m)[1] as string,
    mailLine: mail[1] as string,
    smtpApiUrl: mail[2] as string,
    mailerLiteBaseUrl: field('MailerLite', /^ {2}MailerLite {2}stand-in at (http:\/\/\S+)/m)[1] as string,
    firestoreLine: firestore[1] as string,
    firestoreHostPort: firestore[2] as string,
    pubsubLine: pubsub[1] as string,
    tasksLine: tasks[1] as string,
  };
}

/**
 * Runs a scheduled function once, as Cloud Scheduler does: an HTTP request to it. The Functions emulator
 * serves it on its trigger route (key `<region>-<name>-<n>`, n counting reloads of the functions; 0 here).
 * firebase-tools' Pub/Sub emulator registers the schedule's topic but cannot deliver to a 2nd-gen scheduled
 * function ("Unsupported trigger signature: http"), so publishing to the topic would do nothing.
 */
async function runScheduled(ports: StackPorts, name: string): Promise<void> {
  const url = `http://127.0.0.1:${ports.GOODY_FUNCTIONS_PORT}/functions/projects/demo-goody/triggers/us-central1-${name}-0`;
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  expect(response.status, `${name} ran: ${await response.text()}`).toBe(200);
}

const DOCUMENTS = 'projects/demo-goody/databases/(default)/documents';
/** The emulator lets this credential past the security rules (what the Admin SDK sends it). */
const OWNER = { authorization: 'Bearer owner' };

async function callCallable(
  ports: StackPorts,
  name: string,
  data: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const url = `http://127.0.0.1:${ports.GOODY_FUNCTIONS_PORT}/demo-goody/us-central1/${name}`;
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ data }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** What the site writes: the sign-up document, with a server timestamp, over the REST API (as the rules allow). */
function storeSignup(banner: Banner, id: string, email: string, source: 'hero_form' | 'final_cta') {
  return storeSignupAsThePage(banner.firestoreHostPort, id, email, source);
}

interface MailerLiteState {
  subscribers: { email: string; groups: string[] }[];
  requests: { method: string; path: string }[];
}

async function mailerLiteState(banner: Banner): Promise<MailerLiteState> {
  const root = banner.mailerLiteBaseUrl.replace(/\/api$/, '');
  return (await (await fetch(`${root}/__control/state`)).json()) as MailerLiteState;
}

/** Every process of the run gone and every port free: the stack notices on its own (within about a second). */
async function expectAllGone(run: LauncherRun, ports: StackPorts): Promise<void> {
  // Poll rather than assume a duration.
  for (let i = 0; i < STOP_TIMEOUT_MS / 250 && run.survivors().length > 0; i++) await delay(250);
  expect(run.survivors()).toEqual([]);
  for (const port of Object.values(ports)) {
    expect(await isPortFree(port), `port ${port} is free again`).toBe(true);
  }
}

describe('npm start', () => {
  let ports: StackPorts;
  let dataDir: string;
  let mailDir: string;
  let run: LauncherRun;
  let banner: Banner;
  let webDistBefore: number | undefined;

  beforeAll(() => {
    webDistBefore = statSync(webDistIndex, { throwIfNoEntry: false })?.mtimeMs;
  });
  // One stack for every case below: each uses addresses and documents of its own, and the last ones stop it.
  const stack = sharedStack({ logName: 'start-stack.log', startTimeoutMs: START_TIMEOUT_MS });
  beforeAll(() => {
    ({ ports, dataDir, run } = stack);
    mailDir = path.join(dataDir, 'mail');
    banner = parseBanner(run.output());
  });

  it("prints where the site, the admin page, mail and MailerLite are, and which parts are Google's emulators", () => {
    expect(banner.siteUrl).toBe(`http://127.0.0.1:${ports.GOODY_HOSTING_PORT}`);
    expect(banner.adminUrl).toBe(`http://127.0.0.1:${ports.GOODY_HOSTING_PORT}/admin`);
    expect(banner.firestoreHostPort).toBe(`127.0.0.1:${ports.GOODY_FIRESTORE_PORT}`);
    expect(banner.firestoreLine).toBe(
      `Firebase Firestore emulator at 127.0.0.1:${ports.GOODY_FIRESTORE_PORT}, enforcing firestore.rules`,
    );
    expect(banner.pubsubLine).toContain(`Firebase Pub/Sub emulator at 127.0.0.1:${ports.GOODY_PUBSUB_PORT}`);
    expect(banner.tasksLine).toContain(
      `Firebase Cloud Tasks emulator at 127.0.0.1:${ports.GOODY_TASKS_PORT}`,
    );
    expect(run.output()).toContain(
      "Google's Firebase emulators: Hosting, Functions, Firestore, Pub/Sub, Cloud Tasks. Stand-ins: MailerLite, SMTP.",
    );
    expect(run.output()).toMatch(/\[launcher\] Google's emulators: Java \d+ /);
    expect(run.output()).not.toMatch(/stand-in.*Firestore|Firestore stand-in/i);
  });

  it('enforces firestore.rules: the writes and reads the rules refuse are refused', async () => {
    const commit = (fields: Record<string, unknown>, transforms: unknown[]) =>
      fetch(`http://${banner.firestoreHostPort}/v1/${DOCUMENTS}:commit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          writes: [
            {
              update: { name: `${DOCUMENTS}/email_subscriptions/refused-${Math.random()}`, fields },
              currentDocument: { exists: false },
              updateTransforms: transforms,
            },
          ],
        }),
      });
    // A sign-up without its server timestamp, and one with a field the page never writes.
    const fields = {
      email: { stringValue: 'kid@example.com' },
      subscription_type: { stringValue: 'updates' },
      source: { stringValue: 'hero_form' },
    };
    const noTimestamp = await commit(fields, []);
    expect(noTimestamp.status).toBe(403);
    expect(await noTimestamp.text()).toContain('PERMISSION_DENIED');
    const extraField = await commit({ ...fields, admin: { booleanValue: true } }, [
      { fieldPath: 'created_at', setToServerValue: 'REQUEST_TIME' },
    ]);
    expect(extraField.status).toBe(403);
    await extraField.arrayBuffer();
    // A stranger listing the sign-ups.
    const list = await fetch(`http://${banner.firestoreHostPort}/v1/${DOCUMENTS}/email_subscriptions`);
    expect(list.status).toBe(403);
    await list.arrayBuffer();
  });

  it("serves the app's HTML and its scripts at the printed URL, on every route", async () => {
    for (const url of [banner.siteUrl, banner.adminUrl]) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/html');
      const html = await response.text();
      expect(html).toContain('id="root"');
      // The prerendered landing page names its entry in the hashed bootstrap's data-entry (web/plugins/
      // landing-bootstrap.ts); the app shell of every other route loads it with a plain module script.
      const script = /<script[^>]+(?:src|data-entry)="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      expect(script, 'the built page loads its bundle from /assets/').toBeDefined();
      const asset = await fetch(`${banner.siteUrl}${script}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toContain('javascript');
      await asset.arrayBuffer();
    }
  });

  it('gives a link to the page a preview: absolute og:url and og:image of the site origin, and the 1200x630 PNG served', async () => {
    const html = await (await fetch(banner.siteUrl)).text();
    const tag = (attribute: string, name: string) =>
      new RegExp(`<meta\\s+${attribute}="${name}"\\s+content="([^"]*)"`).exec(html)?.[1];
    // The build's origin: VITE_SITE_ORIGIN, unset here, so the default (web/plugins/site-origin.ts).
    expect(tag('property', 'og:url')).toBe('https://goody.app/');
    expect(tag('property', 'og:image')).toBe('https://goody.app/og-image.png');
    expect(tag('name', 'twitter:card')).toBe('summary_large_image');
    expect(tag('property', 'og:description')?.length).toBeGreaterThan(40);
    expect(html).not.toContain('%SITE_ORIGIN%');
    const image = await fetch(`${banner.siteUrl}/og-image.png`);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    const png = Buffer.from(await image.arrayBuffer());
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1200, 630]);
  });

  it("builds the site for this stack's emulator ports, leaving web/dist alone", () => {
    const siteDir = path.join(stackDirOf(ports), 'site');
    const assets = readdirSync(path.join(siteDir, 'assets')).filter((name) => name.endsWith('.js'));
    const code = assets.map((name) => readFileSync(path.join(siteDir, 'assets', name), 'utf8')).join('\n');
    expect(code).toContain(`127.0.0.1:${ports.GOODY_FIRESTORE_PORT}`);
    expect(code).toContain(`127.0.0.1:${ports.GOODY_FUNCTIONS_PORT}`);
    // web/dist is the deployable build, with the default addresses: npm start must not rewrite it.
    expect(statSync(webDistIndex, { throwIfNoEntry: false })?.mtimeMs).toBe(webDistBefore);
  });

  it('runs the stand-ins and the Firestore emulator at the printed addresses', async () => {
    const mailerLite = await fetch(`${banner.mailerLiteBaseUrl.replace(/\/api$/, '')}/__control/state`);
    expect(mailerLite.status).toBe(200);
    expect(await mailerLite.json()).toHaveProperty('subscribers');

    const unauthenticated = await fetch(`${banner.mailerLiteBaseUrl}/groups`);
    expect(unauthenticated.status).toBe(401);
    await unauthenticated.arrayBuffer();

    const outbox = await fetch(banner.smtpApiUrl);
    expect(outbox.status).toBe(200);
    expect(await outbox.json()).toMatchObject({ total: 0 });

    // The site's connection test: a batchGet of the public health document, as firebase/firestore/lite sends it.
    const health = 'projects/demo-goody/databases/(default)/documents/public/health';
    const firestore = await fetch(
      `http://${banner.firestoreHostPort}/v1/projects/demo-goody/databases/(default)/documents:batchGet`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ documents: [health] }),
      },
    );
    expect(firestore.status).toBe(200);
    const [answer] = (await firestore.json()) as { missing?: string; found?: { name: string } }[];
    expect(answer?.missing ?? answer?.found?.name).toBe(health);
  });

  it('answers the admin sync callable over the callable protocol', async () => {
    const { status, body } = await callCallable(ports, 'sync-emails-to-mailerlite', {});
    expect(status).toBe(200);
    const result = body.result as Record<string, unknown>;
    expect(typeof result.success).toBe('boolean');
    expect(typeof result.message).toBe('string');
    expect(typeof result.synced).toBe('number');
    expect(result.error === null || typeof result.error === 'string').toBe(true);
  });

  it('wires the functions to the stand-ins through Cloud Tasks: a sign-up reaches MailerLite and its thank-you the outbox, once', async () => {
    const email = 'stack-test@example.com';
    const id = pageDocumentId('stackTest');
    await storeSignup(banner, id, email, 'hero_form');

    const mailerLite = () => mailerLiteState(banner);
    // Pressed twice, as a double click or a client retry would: the callables make no work (the row's own
    // trigger enqueued it), so two presses still make one upsert and one mail.
    for (let press = 0; press < 2; press++) {
      const contact = await callCallable(ports, 'add-contact-to-mailerlite', {
        email,
        source: 'hero_form',
      });
      expect(contact).toEqual({ status: 200, body: { result: { status: 'accepted' } } });
      const thankYou = await callCallable(ports, 'send-thank-you-email', { email });
      expect(thankYou).toEqual({ status: 200, body: { result: { status: 'accepted' } } });
    }
    // The row's trigger queued the work: the Cloud Tasks emulator dispatches it to the two queues.
    await expect
      .poll(async () => (await mailerLite()).subscribers.find((candidate) => candidate.email === email), {
        timeout: 30_000,
      })
      .toMatchObject({ email, groups: [expect.any(String)] });
    await expect
      .poll(async () => ((await (await fetch(banner.smtpApiUrl)).json()) as { total: number }).total, {
        timeout: 30_000,
      })
      .toBe(1);
    await delay(2_000);
    const upserts = (await mailerLite()).requests.filter(
      (request) => request.method === 'POST' && request.path === '/api/subscribers',
    );
    expect(upserts, 'one task, so one upsert').toHaveLength(1);
    const outbox = (await (await fetch(banner.smtpApiUrl)).json()) as {
      messages: { to: string[]; file: string }[];
    };
    expect(outbox.messages.map((message) => message.to)).toEqual([[email]]);
    expect(outbox.messages[0]?.file.startsWith(mailDir)).toBe(true);
    expect(readdirSync(mailDir).filter((name) => name.endsWith('.eml'))).toHaveLength(1);

    // The index-signup trigger ran in the emulator: the row carries its mailbox key (the page wrote three fields).
    const row = async () =>
      (await (
        await fetch(`http://${banner.firestoreHostPort}/v1/${DOCUMENTS}/email_subscriptions/${id}`, {
          headers: OWNER,
        })
      ).json()) as { fields?: Record<string, { stringValue?: string }> };
    await expect
      .poll(async () => (await row()).fields?.mailbox_key?.stringValue, { timeout: 30_000 })
      .toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('runs finish-erasures as the scheduler would: an unsubscribe made while MailerLite was down is finished', async () => {
    const email = 'stack-test@example.com';
    const mailerLiteRoot = banner.mailerLiteBaseUrl.replace(/\/api$/, '');
    const subscribers = async () =>
      (
        (await (await fetch(`${mailerLiteRoot}/__control/state`)).json()) as {
          subscribers: { email: string }[];
        }
      ).subscribers.map((subscriber) => subscriber.email);
    expect(await subscribers(), 'the sign-up of the test before').toContain(email);
    const outbox = (await (await fetch(banner.smtpApiUrl)).json()) as { messages: { text: string }[] };
    const link = /^(http:\/\/127\.0\.0\.1:\d+\/demo-goody\/us-central1\/unsubscribe\?\S+)$/m.exec(
      outbox.messages[0]?.text ?? '',
    )?.[1];
    expect(link, 'the unsubscribe link of the thank-you mail').toBeDefined();

    const faults = `${mailerLiteRoot}/__control/faults`;
    const down = await fetch(faults, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ down: true }),
    });
    expect(down.ok).toBe(true);
    expect(await pressOneClick(link as string)).toBe(200);
    await (await fetch(faults, { method: 'DELETE' })).arrayBuffer();
    expect(await subscribers(), 'still in MailerLite: it was down').toContain(email);

    await runScheduled(ports, 'finish-erasures');
    expect(await subscribers()).not.toContain(email);
  });

  it('runs retention as the scheduler would: sign-ups past the retention period are erased, recent ones kept', async () => {
    const store = (id: string, createdAt: string) =>
      fetch(`http://${banner.firestoreHostPort}/v1/${DOCUMENTS}/email_subscriptions?documentId=${id}`, {
        method: 'POST',
        headers: { ...OWNER, 'content-type': 'application/json' },
        body: JSON.stringify({
          fields: {
            email: { stringValue: `${id}@example.com` },
            subscription_type: { stringValue: 'updates' },
            source: { stringValue: 'hero_form' },
            created_at: { timestampValue: createdAt },
          },
        }),
      }).then((response) => response.arrayBuffer());
    await store('long-ago', '2020-01-01T00:00:00Z');
    await store('just-now', new Date().toISOString());

    await runScheduled(ports, 'retention');

    const list = await fetch(`http://${banner.firestoreHostPort}/v1/${DOCUMENTS}/email_subscriptions`, {
      headers: OWNER,
    });
    const ids = (((await list.json()) as { documents?: { name: string }[] }).documents ?? []).map((doc) =>
      doc.name.slice(doc.name.lastIndexOf('/') + 1),
    );
    expect(ids).toContain('just-now');
    expect(ids).not.toContain('long-ago');
  });

  it('stops every process it started and frees every port on Ctrl-C', async () => {
    const tree = run.rememberTree();
    // npm, the launcher, firebase-tools and its function workers at least.
    expect(tree.length).toBeGreaterThanOrEqual(2);

    // Ctrl-C in a terminal signals the whole foreground process group: npm and the launcher.
    expect(await run.interrupt(STOP_TIMEOUT_MS)).toEqual({ code: 0, signal: null });
    expect(run.output()).toContain('[launcher] stopped; every port it used is free again.');
    expect(run.survivors()).toEqual([]);
    for (const port of Object.values(ports)) {
      expect(await isPortFree(port), `port ${port} is free again`).toBe(true);
    }
    expect(existsSync(stackDirOf(ports))).toBe(false);
    // The Firestore emulator exported its documents on the way out, for the next start to import.
    expect(existsSync(path.join(dataDir, 'firestore-export', 'firebase-export-metadata.json'))).toBe(true);
  });

  it(
    'finds the sign-ups again after a restart (the emulator imports what it exported), and leaves nothing behind when that launcher is killed with SIGKILL',
    async () => {
      // Without the builds (npm run emulators): what is tested is the database's export and import.
      const again = runLauncher(process.execPath, ['--import', 'tsx', 'dev/start.ts', '--no-build'], {
        ...portEnv(ports),
        GOODY_DATA_DIR: dataDir,
      });
      try {
        await again.waitFor(READY_BANNER, START_TIMEOUT_MS);
        again.rememberTree();
        const stored = await fetch(
          `http://${banner.firestoreHostPort}/v1/${DOCUMENTS}/email_subscriptions/just-now`,
          { headers: OWNER },
        );
        expect(stored.status).toBe(200);
        await stored.arrayBuffer();

        // The launcher killed outright has no chance to stop anything: what it started notices and stops.
        // (A stack of its own for this would cost a start; this one is done with.)
        process.kill(again.child.pid as number, 'SIGKILL');
        await again.exited;
        await expectAllGone(again, ports);
      } finally {
        again.killAll();
      }
    },
    START_TIMEOUT_MS + STOP_TIMEOUT_MS,
  );
});

describe('npm start with a port already in use', () => {
  let holder: Server | undefined;
  afterAll(() => holder?.close());

  it('names the port and what wanted it, and starts nothing', async () => {
    const ports = await freeStackPorts();
    holder = createServer();
    await new Promise<void>((resolve) => holder?.listen(ports.GOODY_FUNCTIONS_PORT, '127.0.0.1', resolve));

    const run = runLauncher(process.execPath, ['--import', 'tsx', 'dev/start.ts'], portEnv(ports));
    try {
      const exit = await run.exited;
      expect(exit).toEqual({ code: 2, signal: null });
      const output = run.output();
      expect(output).toContain('Nothing was started.');
      expect(output).toContain(
        `Port ${ports.GOODY_FUNCTIONS_PORT} on 127.0.0.1 is already in use by pid ${process.pid}`,
      );
      expect(output).toContain('the Functions emulator (the callables) needs it');
      expect(output).toContain('GOODY_FUNCTIONS_PORT=<another port> npm start');
      expect(output).not.toContain('[web build]');
      expect(output).not.toContain('[firebase]');
      for (const [name, port] of Object.entries(ports)) {
        if (name !== 'GOODY_FUNCTIONS_PORT')
          expect(await isPortFree(port), `port ${port} untouched`).toBe(true);
      }
    } finally {
      run.killAll();
    }
  });
});

// Each case below kills one part of a fresh stack and checks that nothing of it is left running or listening.
describe('npm start when a part of the stack dies', () => {
  async function withStack(
    command: string,
    args: string[],
    body: (run: LauncherRun, ports: StackPorts) => Promise<void>,
  ): Promise<void> {
    const { run, ports, remove } = await launchStack(command, args);
    try {
      await run.waitFor(/Ctrl-C stops everything\./, START_TIMEOUT_MS);
      run.rememberTree();
      await body(run, ports);
    } finally {
      remove();
    }
  }

  // What `npm run emulators` runs: the same launcher without its builds (npm test's build step made them; the
  // builds are this file's first describe's to test), so each of these stacks starts in seconds.
  const launcherArgs = ['--import', 'tsx', 'dev/start.ts', '--no-build'];

  it(
    'stops everything else and exits with an error when firebase-tools dies',
    () =>
      withStack(process.execPath, launcherArgs, async (run, ports) => {
        const firebase = run
          .rememberTree()
          .find((entry) => entry.ppid === run.child.pid && entry.pgid === entry.pid);
        expect(firebase, 'firebase-tools runs in a process group of its own').toBeDefined();

        process.kill(firebase?.pid as number, 'SIGKILL');
        const exit = await run.exited;

        expect(exit).toEqual({ code: 1, signal: null });
        expect(run.output()).toContain(
          '[launcher] firebase-tools (the Firebase emulators) was killed by SIGKILL unexpectedly',
        );
        await expectAllGone(run, ports);
      }),
    START_TIMEOUT_MS + STOP_TIMEOUT_MS,
  );

  it(
    'stops when whatever started it dies without a signal to it',
    () =>
      // A shell in between stands for npm or a test runner that crashes: it dies, the launcher is re-parented.
      withStack('sh', ['-c', `${process.execPath} ${launcherArgs.join(' ')}`], async (run, ports) => {
        const launcher = run.rememberTree().find((entry) => entry.ppid === run.child.pid);
        expect(launcher, 'the shell runs the launcher as its child').toBeDefined();

        process.kill(run.child.pid as number, 'SIGKILL');
        await expectAllGone(run, ports);
        expect(run.output()).toContain(
          `[launcher] the process that started it (pid ${run.child.pid}) is gone`,
        );
      }),
    START_TIMEOUT_MS + STOP_TIMEOUT_MS,
  );
});

describe('npm start where the Firebase emulators cannot run', () => {
  it('says in one message what to install, exits 2, and starts nothing', async () => {
    const ports = await freeStackPorts();
    const run = runLauncher(process.execPath, ['--import', 'tsx', 'dev/start.ts'], {
      ...portEnv(ports),
      FIRESTORE_EMULATOR_BINARY_PATH: '/nonexistent/cloud-firestore-emulator.jar',
    });
    try {
      expect(await run.exited).toEqual({ code: 2, signal: null });
      const output = run.output();
      expect(output).toContain(
        "[launcher] Google's Firebase emulators cannot run on this machine: " +
          'FIRESTORE_EMULATOR_BINARY_PATH=/nonexistent/cloud-firestore-emulator.jar does not exist.',
      );
      expect(output).toContain('npx firebase setup:emulators:firestore');
      expect(output).not.toMatch(/\n\s+at /);
      expect(output).not.toContain('[firebase]');
      expect(output).not.toContain('[web build]');
      for (const port of Object.values(ports)) expect(await isPortFree(port)).toBe(true);
    } finally {
      run.killAll();
    }
  });
});
