// `npm run bench:delivery`: how long after a sign-up is stored its thank-you is in the outbox and its contact in
// MailerLite. Starts `npm start`'s stack on free ports, waits until a callable answers through the site, then
// makes --signups sign-ups (default 10), --gap-ms apart (default 1500), each exactly as the landing page's hero
// form makes it: the connection test (a one-document read of public/health) and the insert into
// email_subscriptions over Firestore's REST API without owner auth, so the security rules apply; then
// add-contact-to-mailerlite and send-thank-you-email on the site's origin (/api/<name>, Hosting's rewrites) over
// the callable protocol. From the insert's commit (the client's clock when it answered) it times
//
//   thank-you  until the mail is in the SMTP outbox (the outbox's own receivedAt)
//   contact    until the subscriber is in the MailerLite stand-in (first seen, polled every 50 ms: its
//              state gives creation times to the second only)
//
// in two parts, each printed with its p50 and max:
//
//   cold       the first --cold-signups sign-ups (default 3) on the fresh stack: the Functions emulator starts
//              the trigger's and the delivery queues' worker processes on their first requests (as a deployed
//              function without minimum instances starts an instance), so these pay the cold starts;
//   warm       then --signups sign-ups (default 10), once every worker is up, as a running deployment serves.
//
// The target is p50 <= 2 s each, on the warm part; the cold figures are printed beside it, not judged. A sign-up not
// delivered within 120 s counts as not delivered; either that or a missed target exits 1. Writes
// bench-results/delivery-<timestamp>.json and delivery-latest.json, and with --out also that file.
//
//   npm run bench:delivery [-- --signups 10 --cold-signups 3 --gap-ms 1500 --out <file>]

import { randomInt } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import {
  addContactRequest,
  CALLABLES,
  COLLECTIONS,
  HEALTH_DOCUMENT,
  subscriptionTypeOf,
} from '@goody/contract';
import { callCallable, type OutboxMessage, Services } from '../e2e/support/services.ts';
import { PROJECT_ID, type StackInfo } from '../e2e/support/stack.ts';
import { benchOnStack } from './on-stack.ts';
import { writeResults } from './paths.ts';
import { median } from './stats.ts';

const { values: args } = parseArgs({
  options: {
    signups: { type: 'string', default: '10' },
    'gap-ms': { type: 'string', default: '1500' },
    out: { type: 'string' },
    'cold-signups': { type: 'string', default: '3' },
  },
});
const SIGNUPS = Number(args.signups);
const COLD_SIGNUPS = Number(args['cold-signups']);
const GAP_MS = Number(args['gap-ms']);
if (!Number.isInteger(SIGNUPS) || SIGNUPS < 1) throw new Error('--signups must be a positive integer');
if (!Number.isInteger(COLD_SIGNUPS) || COLD_SIGNUPS < 0)
  throw new Error('--cold-signups must be a whole number, 0 or more');
if (!Number.isFinite(GAP_MS) || GAP_MS < 0) throw new Error('--gap-ms must be a number of ms, 0 or more');
const TARGET_MS = 2_000;
const GIVE_UP_MS = 120_000;
const POLL_MS = 50;
const SOURCE = 'hero_form';

interface Signup {
  email: string;
  /** Its sequence (connection test, insert, both callables) has ended, well or not. */
  finished: boolean;
  /** Date.now() when the insert's commit answered. */
  insertedAt?: number;
  thankYouAt?: number;
  contactAt?: number;
  error?: string;
}

const DOCUMENTS = `projects/${PROJECT_ID}/databases/(default)/documents`;

/** A 20-character id from Firestore's alphabet, as addDoc makes one in the page. */
const autoId = () =>
  Array.from(
    { length: 20 },
    () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'[randomInt(62)],
  ).join('');

/** A REST request as Firestore Lite makes it from the page: no owner credential. */
async function firestore(stack: StackInfo, method: string, body: unknown): Promise<void> {
  const response = await fetch(`${stack.firestoreUrl}/v1/${DOCUMENTS}:${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} answered ${response.status}: ${text.slice(0, 200)}`);
}

async function callOnSite(stack: StackInfo, name: string, data: unknown): Promise<void> {
  const url = new URL(`/api/${name}`, stack.siteUrl).href;
  const answer = await callCallable(stack, name, data, { url, timeoutMs: 20_000 });
  if (answer.status !== 200)
    throw new Error(`${name} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
}

/** The hero form's sign-up: connection test -> insert -> add contact -> thank-you, one after another. */
async function signUp(stack: StackInfo, signup: Signup): Promise<void> {
  try {
    await firestore(stack, 'batchGet', {
      documents: [`${DOCUMENTS}/${HEALTH_DOCUMENT.collection}/${HEALTH_DOCUMENT.id}`],
    });
    await firestore(stack, 'commit', {
      writes: [
        {
          update: {
            name: `${DOCUMENTS}/${COLLECTIONS.signups}/${autoId()}`,
            fields: {
              email: { stringValue: signup.email },
              subscription_type: { stringValue: subscriptionTypeOf(SOURCE) },
              source: { stringValue: SOURCE },
            },
          },
          currentDocument: { exists: false },
          updateTransforms: [{ fieldPath: 'created_at', setToServerValue: 'REQUEST_TIME' }],
        },
      ],
    });
    signup.insertedAt = Date.now();
    await callOnSite(stack, CALLABLES.addContact, addContactRequest(signup.email, SOURCE));
    await callOnSite(stack, CALLABLES.sendThankYou, { email: signup.email });
  } catch (error) {
    signup.error = error instanceof Error ? error.message : String(error);
  } finally {
    signup.finished = true;
  }
}

/**
 * Hosting answers a few seconds before the functions are loaded. A malformed body is refused once a callable's
 * function is up, and enqueues nothing: both callables are asked, so neither sign-up call waits for a worker.
 */
async function untilCallablesAnswer(stack: StackInfo): Promise<void> {
  const deadline = Date.now() + GIVE_UP_MS;
  for (const name of [CALLABLES.addContact, CALLABLES.sendThankYou]) {
    const url = new URL(`/api/${name}`, stack.siteUrl).href;
    for (;;) {
      const answer = await callCallable(stack, name, {}, { url, timeoutMs: 10_000 }).catch(() => undefined);
      if (answer?.body.error?.status === 'INVALID_ARGUMENT') break;
      if (Date.now() > deadline) throw new Error(`${url} did not answer as a callable within 120 s`);
      await sleep(250);
    }
  }
}

/** Polls the outbox and MailerLite until every sign-up is delivered, failed, or given up on. */
async function watch(services: Services, signups: Signup[]): Promise<void> {
  const waiting = (s: Signup) =>
    !s.finished ||
    (s.insertedAt !== undefined &&
      (s.thankYouAt === undefined || s.contactAt === undefined) &&
      Date.now() < s.insertedAt + GIVE_UP_MS);
  while (signups.some(waiting)) {
    const seenAt = Date.now();
    const [messages, mailerLite] = await Promise.all([
      services.smtp.messages() as Promise<(OutboxMessage & { receivedAt: string })[]>,
      services.mailerLite.state(),
    ]);
    for (const signup of signups) {
      const mail = messages.find((message) => message.to.includes(signup.email));
      if (mail && signup.thankYouAt === undefined) signup.thankYouAt = Date.parse(mail.receivedAt);
      const contact = mailerLite.subscribers.some((subscriber) => subscriber.email === signup.email);
      if (contact && signup.contactAt === undefined) signup.contactAt = seenAt;
    }
    await sleep(POLL_MS);
  }
}

const afterInsert = (signup: Signup, at: number | undefined) =>
  signup.insertedAt !== undefined && at !== undefined && at - signup.insertedAt <= GIVE_UP_MS
    ? at - signup.insertedAt
    : undefined;
const seconds = (ms: number | undefined) =>
  ms === undefined ? 'not delivered' : `${(ms / 1000).toFixed(2)} s`;

await benchOnStack('delivery', {}, async (stack, missed) => {
  const services = new Services(stack.info);
  await untilCallablesAnswer(stack.info);

  const run = Date.now().toString(36);
  type Figures = Record<
    string,
    { p50Ms: number | null; maxMs: number | null; notDelivered: number; met: boolean }
  >;
  /** Makes `count` sign-ups GAP_MS apart, waits for their delivery, prints each and the p50 and max of each measure. */
  const measure = async (part: 'cold' | 'warm', count: number, judged: boolean) => {
    const signups: Signup[] = Array.from({ length: count }, (_, i) => ({
      email: `bench-delivery-${run}-${part}-${i}@example.org`,
      finished: false,
    }));
    const watching = watch(services, signups);
    const start = performance.now();
    const made = signups.map(async (signup, i) => {
      await sleep(start + i * GAP_MS - performance.now());
      await signUp(stack.info, signup);
    });
    await Promise.all([...made, watching]);

    console.log(`\n${part}: ${count} sign-ups ${GAP_MS} ms apart, insert -> delivered:`);
    const rows = signups.map((signup, i) => {
      const thankYouMs = afterInsert(signup, signup.thankYouAt);
      const contactMs = afterInsert(signup, signup.contactAt);
      console.log(
        `  #${String(i + 1).padEnd(3)} thank-you ${seconds(thankYouMs).padEnd(14)} contact ${seconds(contactMs).padEnd(14)}${signup.error ? ` error: ${signup.error}` : ''}`,
      );
      return { email: signup.email, thankYouMs, contactMs, error: signup.error };
    });
    const figures: Figures = {};
    for (const [key, label] of [
      ['thankYouMs', 'thank-you'],
      ['contactMs', 'contact'],
    ] as const) {
      const values = rows.flatMap((row) => (row[key] === undefined ? [] : [row[key]]));
      const notDelivered = rows.length - values.length;
      const p50Ms = values.length > 0 ? median(values) : undefined;
      const maxMs = values.length > 0 ? Math.max(...values) : undefined;
      const met = notDelivered === 0 && p50Ms !== undefined && p50Ms <= TARGET_MS;
      figures[label] = { p50Ms: p50Ms ?? null, maxMs: maxMs ?? null, notDelivered, met };
      console.log(
        `  ${part} ${label.padEnd(10)} p50 ${seconds(p50Ms)}, max ${seconds(maxMs)}` +
          `${notDelivered > 0 ? `, ${notDelivered} not delivered within ${GIVE_UP_MS / 1000} s` : ''}` +
          (judged ? ` (target p50 <= ${TARGET_MS / 1000} s: ${met ? 'met' : 'MISSED'})` : ' (not judged)'),
      );
      if (notDelivered > 0 || (judged && !met)) missed();
    }
    return { rows, figures };
  };
  // Cold first, on the stack as it started (the callables answered a malformed call, so only their own workers
  // are up); then warm, every worker up from the cold part.
  const cold = COLD_SIGNUPS > 0 ? await measure('cold', COLD_SIGNUPS, false) : undefined;
  if (!cold) {
    // No cold part asked for: one sign-up brings every worker up, not counted.
    const warmUp: Signup = { email: `bench-delivery-${run}-warm-up@example.org`, finished: false };
    await Promise.all([signUp(stack.info, warmUp), watch(services, [warmUp])]);
  }
  const { rows, figures } = await measure('warm', SIGNUPS, true);

  const { json } = writeResults('delivery', {
    date: new Date().toISOString(),
    signups: SIGNUPS,
    gapMs: GAP_MS,
    targetMs: TARGET_MS,
    figures,
    rows,
    cold: cold ?? null,
  });
  if (args.out) {
    mkdirSync(path.dirname(path.resolve(args.out)), { recursive: true });
    writeFileSync(args.out, json);
  }
});
