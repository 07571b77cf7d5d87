// `npm run bench:abuse`: how far one bot reaches. Starts `npm start`'s stack on free ports (loopback only) with
// a mail budget of BUDGET an hour, then plays a bot, every loop bounded:
//
// 1. one Gmail mailbox signed up under 12 spellings (dots, +tags, googlemail.com, case), each with both
//    callables pressed: how many thank-you mails reach that mailbox (goal 1);
// 2. 60 new addresses signed up over one minute: how many mails leave (goal: no more than the budget; the
//    rest wait in the queue for a later hour);
// 3. 40 replays of one unsubscribe link after its first click: how many MailerLite requests they cause
//    (goal <= 1) and how many get 429;
// 4. the Firestore reads one replay costs, counted in-process through firebase-admin on the stack's
//    emulator, running the same erasure code the function runs (goal 1-2);
// 5. a sync with JUNK rows of 10 addresses in the way (written with the emulator's triggers paused, as a
//    bulk load) and 5 real sign-ups behind them: whether the real ones reach MailerLite in the same run.
//
// Prints the figures and writes bench-results/abuse-<timestamp>.json and abuse-latest.json.
//
//   npm run bench:abuse [-- --junk 200000]

import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { CALLABLES } from '@goody/contract';
import { deleteApp, initializeApp } from 'firebase-admin/app';
import { getFirestore } from 'firebase-admin/firestore';
import { DEV_MAILBOX_KEY_SECRET, DEV_UNSUBSCRIBE_SECRET } from '../../dev/launcher/launcher.ts';
import { loopbackOnlyEnv } from '../../dev/loopback-env.ts';
import { MailerLiteClient } from '../../functions/src/mailerlite/client.ts';
import { eraseAddress } from '../../functions/src/privacy/erasure.ts';
import { canonicalMailbox } from '../../functions/src/privacy/mailbox-key.ts';
import { ONE_MAILBOX, ONE_MAILBOX_SPELLINGS } from '../../functions/test-support/mailboxes.ts';
import { countReads } from '../../functions/test-support/reads.ts';
import { Services } from '../e2e/support/services.ts';
import { startStack } from '../e2e/support/stack.ts';
import { repoRoot, resultsDir } from './paths.ts';
import { timestamp } from './stats.ts';

const { values: args } = parseArgs({ options: { junk: { type: 'string', default: '200000' } } });
const JUNK = Number(args.junk);
if (!Number.isInteger(JUNK) || JUNK < 1) throw new Error('--junk must be a positive integer');
const BUDGET = 30;
const NEW_ADDRESSES = 60;
const REPLAYS = 40;
const REAL_BEHIND_JUNK = 5;
const MAILBOX = ONE_MAILBOX;
const SPELLINGS = ONE_MAILBOX_SPELLINGS;

const stack = await startStack({
  logFile: path.join(repoRoot, 'tests', '.artifacts', 'bench-abuse-stack.log'),
  env: { GOODY_MAIL_PER_HOUR: String(BUDGET) },
});
const services = new Services(stack.info);
let exitCode = 0;
let ids = 0;

/** What the page does for one sign-up: the insert, then the two callables. */
async function signUp(email: string): Promise<void> {
  await services.firestore.storeSignup(`bot-${ids++}`, email, 'updates', 'hero_form');
  for (const [name, data] of [
    [CALLABLES.addContact, { email, source: 'hero_form' }],
    [CALLABLES.sendThankYou, { email }],
  ] as const) {
    const answer = await services.call(name, data);
    if (answer.status !== 200) throw new Error(`${name} answered ${answer.status}`);
  }
}

/**
 * Waits until the outbox holds more than `after` messages and then takes none for `quietMs` (the queue has
 * done what it will do for now), at most `maxMs`.
 */
async function outboxSettles(after: number, quietMs: number, maxMs: number): Promise<void> {
  const until = Date.now() + maxMs;
  let count = -1;
  let since = Date.now();
  while (Date.now() < until) {
    const now = (await services.smtp.messages()).length;
    if (now !== count) {
      count = now;
      since = Date.now();
    } else if (now > after && Date.now() - since >= quietMs) return;
    await delay(1_000);
  }
}

const figures: Record<string, unknown> = {};
try {
  // 1. One mailbox, twelve spellings.
  for (const email of SPELLINGS) await signUp(email);
  await outboxSettles(0, 15_000, 180_000);
  const mailboxMails = (await services.smtp.messages()).filter((message) =>
    message.to.some((to) => canonicalMailbox(to) === MAILBOX),
  );
  figures.mailsToOneMailboxUnder12Spellings = mailboxMails.length;

  // 2. Sixty new addresses in a minute, one a second.
  const hourAtStart = Math.floor(Date.now() / 3_600_000);
  const started = Date.now();
  for (let i = 0; i < NEW_ADDRESSES; i += 1) {
    await signUp(`new-${i}@example.com`);
    const wait = started + (i + 1) * 1_000 - Date.now();
    if (wait > 0) await delay(wait);
  }
  await outboxSettles(mailboxMails.length, 20_000, 180_000);
  const newMails = (await services.smtp.messages()).filter((message) =>
    message.to.some((to) => to.startsWith('new-')),
  ).length;
  figures.mailsFor60NewAddressesInAMinute = newMails;
  figures.budgetPerHour = BUDGET;
  figures.budgetLeftAfterPart1 = BUDGET - mailboxMails.length;
  figures.sameClockHour = Math.floor(Date.now() / 3_600_000) === hourAtStart;

  // 3. Forty replays of one link, after its first click.
  const link = /^(http:\/\/127\.0\.0\.1:\d+\/demo-goody\/us-central1\/unsubscribe\?a=[\w-]+&t=[\w-]+)$/m.exec(
    mailboxMails[0]?.text ?? '',
  )?.[1];
  if (!link) throw new Error("no unsubscribe link in the mailbox's thank-you mail");
  const click = () =>
    fetch(link, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    }).then(async (response) => {
      await response.arrayBuffer();
      return response.status;
    });
  figures.firstClick = await click();
  const requestsBefore = (await services.mailerLite.state()).requests.length;
  const statuses: Record<string, number> = {};
  for (let i = 0; i < REPLAYS; i += 1) {
    const status = String(await click());
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  figures.mailerLiteRequestsFor40Replays =
    (await services.mailerLite.state()).requests.length - requestsBefore;
  figures.replayStatuses = statuses;

  // 4. Reads per replay, in-process on the stack's emulator (the function's own erasure code).
  process.env.FIRESTORE_EMULATOR_HOST = stack.info.firestoreUrl.replace(/^http:\/\//, '');
  // Loopback only: firebase-admin would otherwise ask the GCE metadata server whether it runs on Google Cloud.
  Object.assign(process.env, loopbackOnlyEnv);
  const app = initializeApp({ projectId: 'demo-goody' }, 'bench-abuse');
  try {
    const db = getFirestore(app);
    const client = new MailerLiteClient({
      apiKey: 'dev-mailerlite-key',
      baseUrl: `${stack.info.mailerLiteUrl}/api`,
    });
    const silent = { info() {}, warn() {}, error() {} };
    const counter = countReads(db);
    const mlBefore = (await services.mailerLite.state()).requests.length;
    try {
      for (let i = 0; i < REPLAYS; i += 1) {
        await eraseAddress(SPELLINGS[1] as string, {
          db,
          client,
          clock: { now: () => Date.now(), sleep: (ms) => delay(ms) },
          logger: silent,
          secret: DEV_UNSUBSCRIBE_SECRET,
          mailboxSecret: DEV_MAILBOX_KEY_SECRET,
        });
      }
    } finally {
      counter.stop();
    }
    figures.firestoreReadsPerReplay = counter.reads / REPLAYS;
    figures.mailerLiteRequestsForInProcessReplays =
      (await services.mailerLite.state()).requests.length - mlBefore;

    // 5. The sync with junk in the way.
    const hub = (action: 'disable' | 'enable') =>
      fetch(`${stack.info.hubUrl}/functions/${action}BackgroundTriggers`, { method: 'PUT' }).then(
        (response) => {
          if (!response.ok) throw new Error(`hub ${action}: ${response.status}`);
        },
      );
    await hub('disable');
    const seedStarted = Date.now();
    const firstAt = Date.now() - 24 * 3_600_000;
    const signups = db.collection('email_subscriptions');
    try {
      for (let offset = 0; offset < JUNK; offset += 500) {
        const batch = db.batch();
        for (let i = offset; i < Math.min(JUNK, offset + 500); i += 1) {
          batch.create(signups.doc(), {
            email: `junk${i % 10}@example.com`,
            subscription_type: 'updates',
            source: 'hero_form',
            created_at: new Date(firstAt + i),
          });
        }
        await batch.commit();
      }
    } finally {
      await hub('enable');
    }
    const real = Array.from({ length: REAL_BEHIND_JUNK }, (_, i) => `real-${i}@example.com`);
    for (const [i, email] of real.entries()) {
      await signups.doc(`real-${i}`).create({
        email,
        subscription_type: 'club',
        source: 'final_cta',
        created_at: new Date(firstAt + JUNK + i),
      });
    }
    figures.junkSeedSeconds = Math.round((Date.now() - seedStarted) / 1000);
    const syncStarted = Date.now();
    const reply = await longCall(`${stack.info.functionsUrl}/${CALLABLES.syncEmails}`, { data: {} });
    figures.syncSeconds = Math.round((Date.now() - syncStarted) / 1000);
    figures.syncReply = reply;
    const state = await services.mailerLite.state();
    figures.realRowsBehindJunkDelivered = real.filter((email) =>
      state.subscribers.some((subscriber) => subscriber.email === email),
    ).length;
  } finally {
    await deleteApp(app);
  }

  const goal = (met: boolean) => (met ? 'met' : 'MISSED');
  const lines = [
    `one mailbox under 12 spellings: ${figures.mailsToOneMailboxUnder12Spellings} thank-you mail(s) (goal 1: ${goal(figures.mailsToOneMailboxUnder12Spellings === 1)})`,
    `60 new addresses in a minute: ${newMails} mails sent (budget ${BUDGET} an hour, ${figures.budgetLeftAfterPart1} left after part 1: ${goal(newMails <= (figures.budgetLeftAfterPart1 as number) || !figures.sameClockHour)}); the rest wait in the queue`,
    `40 replays of one link: ${figures.mailerLiteRequestsFor40Replays} MailerLite requests (goal <= 1: ${goal((figures.mailerLiteRequestsFor40Replays as number) <= 1)}), answers ${JSON.stringify(statuses)}`,
    `Firestore reads per replay: ${figures.firestoreReadsPerReplay} (goal 1-2: ${goal((figures.firestoreReadsPerReplay as number) <= 2)}), MailerLite requests ${figures.mailerLiteRequestsForInProcessReplays}`,
    `sync with ${JUNK.toLocaleString('en-US')} junk rows of 10 addresses in the way: real rows behind them delivered ${figures.realRowsBehindJunkDelivered}/${REAL_BEHIND_JUNK} in one run of ${figures.syncSeconds} s (goal all: ${goal(figures.realRowsBehindJunkDelivered === REAL_BEHIND_JUNK)}); reply: ${reply_(figures.syncReply)}`,
  ];
  console.log(
    `\nbench:abuse, one bot against npm start's stack:\n${lines.map((line) => `  ${line}`).join('\n')}`,
  );
  if (lines.some((line) => line.includes('MISSED'))) exitCode = 1;
  mkdirSync(resultsDir, { recursive: true });
  const json = `${JSON.stringify({ date: new Date().toISOString(), junkRows: JUNK, figures }, null, 2)}\n`;
  writeFileSync(path.join(resultsDir, `abuse-${timestamp()}.json`), json);
  writeFileSync(path.join(resultsDir, 'abuse-latest.json'), json);
} catch (error) {
  console.error('bench:abuse failed:', error);
  exitCode = 1;
} finally {
  await stack.stop();
}
process.exit(exitCode);

/**
 * A callable's result over plain node:http: a sync through hundreds of thousands of rows may take minutes
 * before its reply's first byte, longer than fetch waits for headers.
 */
function longCall(url: string, body: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => {
          try {
            resolve((JSON.parse(text) as { result?: unknown }).result);
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    request.setTimeout(600_000, () => request.destroy(new Error('the sync did not answer within 600 s')));
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

function reply_(reply: unknown): string {
  const { success, synced, remaining, message } = (reply ?? {}) as Record<string, unknown>;
  return `success ${success}, synced ${synced}, remaining ${remaining}: "${message}"`;
}
