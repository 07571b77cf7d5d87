// `npm run dev` as a developer uses it: a save shows without a restart. It runs in a copy of the repository
// (repo-copy.ts), because it edits sources, a worker and a landing section, which it must never do in the
// repository itself; the launcher under test is the copy's, so it takes the copy as its root.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { chromium as playwrightChromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandLineOf } from '../../dev/process-table.ts';
import { stackDirFor } from '../../dev/stack.ts';
import { chromiumArgs, findChromium } from '../e2e/chromium.ts';
import {
  isPortFree,
  type LaunchedStack,
  type LauncherRun,
  launchStack,
  repoRoot,
} from './launcher-process.ts';
import { pageDocumentId, storeSignupAsThePage } from './page-writes.ts';
import { copyRepository, type RepoCopy } from './repo-copy.ts';
import { READY_BANNER } from './shared-stack.ts';

// tsc's first compilation, then the emulators: generous, since a cold 2-core machine is slow.
const START_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 30_000;
/** A save -> tsc's incremental compilation -> the emulator's debounced reload (1 s) and its discovery of the functions. */
const RELOAD_TIMEOUT_MS = 90_000;
/** A stored sign-up -> its trigger -> the contact queue -> the worker's first run (a cold start). */
const WORKER_TIMEOUT_MS = 60_000;

const DOCUMENTS = 'projects/demo-goody/databases/(default)/documents';
/** The emulator lets this credential past the security rules (what the Admin SDK sends it). */
const OWNER = { authorization: 'Bearer owner' };

function bannerField(output: string, name: string): string {
  const match = new RegExp(`^ {2}${name.padEnd(11)} (.*)$`, 'm').exec(output);
  if (!match) throw new Error(`no ${name} line in:\n${output.slice(-3000)}`);
  return match[1] as string;
}

/** What the page writes for a sign-up (over the REST API, as the rules allow); its trigger queues the contact. */
const storeSignup = (firestore: string, id: string, email: string) =>
  storeSignupAsThePage(firestore, id, email);

/**
 * Resolves with the first match of `pattern` in what the run printed after `from` (an output length), its
 * colours taken out: Vite colours its log lines wherever `CI` is set (as in `.ci/run`), even into a pipe.
 */
async function printedAfter(run: LauncherRun, from: number, pattern: RegExp, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(stripVTControlCharacters(run.output().slice(from)));
    if (match) return match;
    if (Date.now() > deadline) {
      throw new Error(
        `nothing matching ${pattern} within ${timeoutMs} ms; printed since:\n${run.output().slice(from).slice(-4000)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Replaces `find` (which must be there exactly once) in a file under `root` (the copy's). */
function editOnce(
  root: string,
  { file, find, replace }: { file: string; find: string; replace: string },
): void {
  const text = readFileSync(path.join(root, file), 'utf8');
  expect(text.split(find).length - 1, `"${find}" once in ${file}`).toBe(1);
  writeFileSync(path.join(root, file), text.replace(find, replace));
}

function firebaseToolsPid(run: LauncherRun): number | undefined {
  return run.rememberTree().find((entry) => commandLineOf(entry.pid)?.includes(' emulators:start '))?.pid;
}

/** The files the test edits in the copy, and what it writes there: never to be found in the repository's. */
const EDITS = {
  worker: {
    file: path.join('functions', 'src', 'delivery', 'deliver-contact.ts'),
    find: "logger.info(claim.movesFrom ? 'add_contact.moved_to_own_address' : 'add_contact.upserted', {",
    replace:
      "logger.info(claim.movesFrom ? 'add_contact.moved_to_own_address' : 'add_contact.upserted', { dev_loop_edit: 'saved',",
  },
  section: {
    file: path.join('web', 'src', 'pages', 'landing', 'sections', 'HeroSection.tsx'),
    find: '{hero.badge}',
    replace: "{hero.badge}{' (edited while open)'}",
  },
};

const chromiumPath = findChromium();

describe('npm run dev', () => {
  let copy: RepoCopy;
  let stack: LaunchedStack;
  let ports: LaunchedStack['ports'];
  let dataDir: string;
  let run: LauncherRun;
  let siteUrl: string;
  let firestore: string;

  beforeAll(async () => {
    copy = copyRepository();
    stack = await launchStack('npm', ['run', 'dev'], { cwd: copy.root });
    ({ ports, dataDir, run } = stack);
    await run.waitFor(READY_BANNER, START_TIMEOUT_MS);
    siteUrl = bannerField(run.output(), 'Site');
    firestore = /at (127\.0\.0\.1:\d+),/.exec(bannerField(run.output(), 'Firestore'))?.[1] as string;
    run.rememberTree();
  }, START_TIMEOUT_MS + 10_000);

  afterAll(() => {
    stack?.remove();
    // What the stack printed (tsc's, Vite's and the functions' lines included), kept for whoever reads a failure.
    stack?.run.keepOutput('dev-stack.log');
    copy?.remove();
  });

  it("prints the page's Vite URL, where mail lands, and that the functions reload on save", () => {
    const output = run.output();
    expect(siteUrl).toBe(`http://127.0.0.1:${ports.GOODY_VITE_PORT}`);
    expect(bannerField(output, 'Admin')).toBe(`${siteUrl}/admin`);
    expect(output).toContain(
      'GOODY is running offline for development (npm run dev). Ctrl-C stops everything.',
    );
    expect(bannerField(output, 'Page')).toContain("Vite's dev server");
    expect(bannerField(output, 'Page')).toContain('hot module replacement');
    expect(bannerField(output, 'Reload')).toContain('tsc --watch');
    expect(bannerField(output, 'Reload')).toContain('the Functions emulator reloads it (no restart)');
    expect(bannerField(output, 'Mail')).toContain(`lands in ${path.join(dataDir, 'mail')}`);
    expect(firestore).toBe(`127.0.0.1:${ports.GOODY_FIRESTORE_PORT}`);
    // No Hosting: its port stays free, its emulator is not among those started.
    expect(output).toContain("Google's Firebase emulators: Functions, Firestore, Pub/Sub, Cloud Tasks.");
    expect(bannerField(output, 'No Hosting')).toContain('Content-Security-Policy');
  });

  it("serves the page from Vite's dev server, with its HMR client, wired to this stack's emulators as a build is", async () => {
    expect(await isPortFree(ports.GOODY_HOSTING_PORT), 'no Hosting emulator').toBe(true);
    const html = await (await fetch(`${siteUrl}/`)).text();
    expect(html).toContain('<script type="module" src="/@vite/client"></script>');
    expect(html).toContain('src="/src/app/main.tsx"');
    const client = await fetch(`${siteUrl}/@vite/client`);
    expect(client.status).toBe(200);
    await client.arrayBuffer();
    // The settings npm start builds the site with (dev/launcher/builds.ts, viteEnv), given to the dev server.
    const firebaseModule = await (await fetch(`${siteUrl}/src/lib/firebase.ts`)).text();
    expect(firebaseModule).toContain(
      `"VITE_FIRESTORE_EMULATOR_HOST": "127.0.0.1:${ports.GOODY_FIRESTORE_PORT}"`,
    );
    expect(firebaseModule).toContain(
      `"VITE_FUNCTIONS_EMULATOR_HOST": "127.0.0.1:${ports.GOODY_FUNCTIONS_PORT}"`,
    );
    expect(firebaseModule).toContain('"VITE_USE_EMULATORS": "true"');
  });

  it(
    'reloads a worker edited in functions/src on the next sign-up, without restarting the emulators, the data kept',
    async () => {
      const firebaseBefore = firebaseToolsPid(run);
      expect(firebaseBefore, 'firebase-tools runs').toBeDefined();

      // A sign-up before the edit: the worker logs its upsert as written.
      const beforeEdit = pageDocumentId('beforeEdit');
      let mark = run.output().length;
      await storeSignup(firestore, beforeEdit, 'before-edit@example.com');
      const before = await printedAfter(
        run,
        mark,
        /\{[^\n]*"message":"add_contact\.upserted"[^\n]*\}/,
        WORKER_TIMEOUT_MS,
      );
      expect(before[0]).not.toContain('dev_loop_edit');

      // The developer's save: one more field on the worker's log line.
      mark = run.output().length;
      editOnce(copy.root, EDITS.worker);
      await printedAfter(
        run,
        mark,
        /\[tsc\] .*Found 0 errors\. Watching for file changes\./,
        RELOAD_TIMEOUT_MS,
      );
      const compiled = run.output().length;
      await printedAfter(run, compiled, /Loaded functions definitions from source/, RELOAD_TIMEOUT_MS);

      mark = run.output().length;
      await storeSignup(firestore, pageDocumentId('afterEdit'), 'after-edit@example.com');
      const after = await printedAfter(
        run,
        mark,
        /\{[^\n]*"message":"add_contact\.upserted"[^\n]*\}/,
        WORKER_TIMEOUT_MS,
      );
      expect(after[0]).toContain('"dev_loop_edit":"saved"');

      // Not a restart: the same firebase-tools, started once, and the first sign-up is still stored.
      expect(firebaseToolsPid(run)).toBe(firebaseBefore);
      expect(run.output().match(/All emulators ready/g)).toHaveLength(1);
      const stored = await fetch(`http://${firestore}/v1/${DOCUMENTS}/email_subscriptions/${beforeEdit}`, {
        headers: OWNER,
      });
      expect(stored.status).toBe(200);
      await stored.arrayBuffer();
    },
    RELOAD_TIMEOUT_MS * 2 + WORKER_TIMEOUT_MS * 2,
  );

  it.skipIf(!chromiumPath)(
    'signs up from the open page, then shows an edit to a landing section in it without a reload (HMR)',
    async () => {
      const browser = await playwrightChromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
      try {
        const page = await browser.newPage();
        await page.goto(`${siteUrl}/`);
        const heading = page.getByRole('heading', { level: 1 });
        await heading.waitFor({ timeout: 60_000 });

        // The page reaches this stack's emulators: its sign-up is the outbox's first mail.
        const field = page.getByRole('textbox', { name: 'Email address' }).first();
        await field.fill('from-the-page@example.com');
        await page.getByRole('button', { name: 'Get Early Access', exact: true }).click();
        const smtpApi = /listed at (http:\/\/\S+)$/.exec(bannerField(run.output(), 'Mail'))?.[1] as string;
        await expect
          .poll(
            async () =>
              ((await (await fetch(smtpApi)).json()) as { messages: { to: string[] }[] }).messages.map(
                (message) => message.to,
              ),
            { timeout: WORKER_TIMEOUT_MS },
          )
          .toContainEqual(['from-the-page@example.com']);

        // A reload would lose this, and what is typed in the field.
        await page.evaluate(() => {
          (window as { __notReloaded?: boolean }).__notReloaded = true;
        });
        await field.fill('still-typed@example.com');
        const mark = run.output().length;
        editOnce(copy.root, EDITS.section);

        await page.getByText('(edited while open)').waitFor({ timeout: 30_000 });
        expect(await page.evaluate(() => (window as { __notReloaded?: boolean }).__notReloaded)).toBe(true);
        expect(await field.inputValue()).toBe('still-typed@example.com');
        await printedAfter(
          run,
          mark,
          /\[vite\] .*hmr update \/src\/pages\/landing\/sections\/HeroSection\.tsx/,
          10_000,
        );
      } finally {
        await browser.close();
      }
    },
    WORKER_TIMEOUT_MS + 120_000,
  );

  it('stops every process it started and frees every port on Ctrl-C, the repository untouched', async () => {
    run.rememberTree();
    expect(await run.interrupt(STOP_TIMEOUT_MS)).toEqual({ code: 0, signal: null });
    expect(run.output()).toContain('[launcher] stopped; every port it used is free again.');
    expect(run.survivors()).toEqual([]);
    for (const port of Object.values(ports)) {
      expect(await isPortFree(port), `port ${port} is free again`).toBe(true);
    }
    // Its stack directory (the copy's, keyed by Vite's port) is gone; the repository's sources are untouched.
    expect(existsSync(stackDirFor(copy.root, ports.GOODY_VITE_PORT))).toBe(false);
    for (const { file, replace } of Object.values(EDITS)) {
      expect(readFileSync(path.join(repoRoot, file), 'utf8').includes(replace), `${file} untouched`).toBe(
        false,
      );
    }
  });
});
