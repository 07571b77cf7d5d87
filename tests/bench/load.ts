// `npm run bench:load`: a launch-day rush through the local stack, as the site makes its sign-ups, and no
// operator: the two callables only queue the work, and Cloud Tasks (its emulator here) delivers it, paced by
// the queues' rate limits and retried after failures. Prints throughput, latency, the drain time against
// MailerLite's own bound, and checks that nothing was lost or sent twice.
//
//   npm run bench:load [-- --signups 2000 --clients 50 --seconds 60 --compress 1] [--no-calm] [--no-outage]
//
// Each sign-up is the site's sequence: the connection test and the insert with the page's own Firestore Lite
// client (web/src/lib/firebase-client.ts, here in Node), then add-contact-to-mailerlite and send-thank-you-email
// over the callable HTTP protocol. The sign-ups arrive evenly over --seconds from --clients concurrent clients. A sign-up is
// accepted once its insert succeeded. The bar: every accepted sign-up is stored once, reaches MailerLite in its
// form's group without any sync pressed, and gets exactly one thank-you; MailerLite confirms each contact once.
//
// MailerLite's limit is 120 requests a minute, and by default the stand-in keeps it: the bound is 1,000 s, and
// both scenarios take about 40 minutes. --compress N shortens its minute N times (the stand-in's window and the
// contact queue's rate, GOODY_MAILERLITE_TASKS_PER_MINUTE, together), so the bound shrinks with it and the ratio
// is what counts, but the work does not: on the emulators a sign-up costs about 0.4 s of CPU (the Functions
// emulator's workers for five invocations, the Firestore emulator, firebase-tools), 800 CPU-seconds for the
// rush, so a run compressed N times needs about 0.8 x N cores to keep up, and on fewer measures the machine,
// not the queues. Two scenarios run on one stack: calm (target: drained within 1.15x of MailerLite's
// bound), and --outage: MailerLite down for the first third of the rush and the mail server refusing from a
// sixth to a half, after which the same totals must come out.
//
// Starts its own stack on free ports (about a minute: it builds first). Figures go to
// bench-results/load-<timestamp>.json and bench-results/load-latest.json.

import { parseArgs } from 'node:util';
import {
  addContactRequest,
  CALLABLES,
  COLLECTIONS,
  type NewSignup,
  type SignupSource,
  SOURCES,
  subscriptionTypeOf,
} from '@goody/contract';
import { deleteApp, type FirebaseApp } from 'firebase/app';
import { type Firestore, setLogLevel } from 'firebase/firestore/lite';
import { loopbackOnlyEnv } from '../../stand-ins/loopback-env.ts';
import {
  addSignup,
  firebaseApp,
  firebaseServices,
  readHealthDocument,
} from '../../web/src/lib/firebase-client.ts';
import { readFirebaseSettings } from '../../web/src/lib/settings.ts';
import { MAILERLITE_GROUP_NAMES, Services } from '../e2e/support/services.ts';
import { PROJECT_ID, type StackInfo } from '../e2e/support/stack.ts';
import { benchOnStack } from './on-stack.ts';
import { writeResults } from './paths.ts';

/** The q-quantile, interpolated between closest ranks (numpy's default), as the other benches report. */
function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = sorted[Math.floor(position)] as number;
  const high = sorted[Math.ceil(position)] as number;
  return low + (high - low) * (position - Math.floor(position));
}

const { values: args } = parseArgs({
  options: {
    signups: { type: 'string', default: '2000' },
    clients: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '60' },
    compress: { type: 'string', default: '1' },
    'no-outage': { type: 'boolean', default: false },
    'no-calm': { type: 'boolean', default: false },
  },
});
const SIGNUPS = Number(args.signups);
const CLIENTS = Number(args.clients);
const RUSH_SECONDS = Number(args.seconds);
const COMPRESS = Number(args.compress);
for (const [name, value] of [
  ['--signups', SIGNUPS],
  ['--clients', CLIENTS],
  ['--seconds', RUSH_SECONDS],
  ['--compress', COMPRESS],
] as const) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
}
/** MailerLite's documented limit, and the share of it the contact queue takes (functions/src/delivery/deliver-contact.ts). */
const MAILERLITE_PER_MINUTE = 120;
const QUEUE_PER_MINUTE = 115;
const WINDOW_MS = 60_000 / COMPRESS;
/** How long the queues may take to drain before the run is called failed. */
const DRAIN_LIMIT_MS = 30 * 60_000;
// How often the drain is checked: a twelfth of MailerLite's window, so the drain time is known to within 0.5% of
// the bound (2000 upserts are 16.7 windows), and every second at most. Each check reads both stand-ins' whole
// state (every subscriber and message so far) from the stack's own process: polling faster only loads the
// machine being measured.
const DRAIN_POLL_MS = Math.max(1_000, WINDOW_MS / 12);

Object.assign(process.env, loopbackOnlyEnv);
// Firestore Lite logs every failed request with its body (the address in it); failures are counted here.
setLogLevel('silent');

type Step = 'connection test' | 'insert' | 'add-contact' | 'thank-you';
const STEPS: Step[] = ['connection test', 'insert', 'add-contact', 'thank-you'];

type Signup = NewSignup;

interface Outcome {
  signup: Signup;
  accepted: boolean;
  /** Whole sign-up, ms (the visitor's wait). */
  total: number;
  steps: Partial<Record<Step, number>>;
  errors: Partial<Record<Step, string>>;
}

const signupOf = (email: string, source: SignupSource): Signup => ({
  email,
  subscription_type: subscriptionTypeOf(source),
  source,
});

function makeSignups(n: number, scenario: string): Signup[] {
  const run = Date.now().toString(36);
  return Array.from({ length: n }, (_, i) =>
    signupOf(`load-${scenario}-${run}-${i}@example.com`, SOURCES[i % SOURCES.length] as SignupSource),
  );
}

/** One visitor's browser: its own Firebase app, as each page load has, made as the page makes its own. */
function clientApp(stack: StackInfo, index: number): { app: FirebaseApp; firestore: Firestore } {
  const settings = readFirebaseSettings({
    VITE_FIREBASE_PROJECT_ID: PROJECT_ID,
    VITE_FIRESTORE_EMULATOR_HOST: new URL(stack.firestoreUrl).host,
    VITE_FUNCTIONS_EMULATOR_HOST: new URL(stack.functionsUrl).host,
  });
  const app = firebaseApp(settings, `load-client-${index}`);
  return { app, firestore: firebaseServices(app, settings).firestore };
}

/** A callable as the Functions SDK calls it: 70 s timeout, an error unless 200 with a result. */
async function callable(stack: StackInfo, name: string, data: unknown): Promise<void> {
  const response = await fetch(`${stack.functionsUrl}/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ data }),
    signal: AbortSignal.timeout(70_000),
  });
  const body = (await response.json().catch(() => ({}))) as { result?: unknown; error?: { status?: string } };
  if (response.status !== 200 || !('result' in body)) {
    throw new Error(`${body.error?.status ?? `HTTP ${response.status}`}`);
  }
}

function errorKind(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string') return code;
  if (error instanceof Error) return error.name === 'TimeoutError' ? 'timeout' : error.message.slice(0, 80);
  return String(error);
}

async function signUp(stack: StackInfo, firestore: Firestore, signup: Signup): Promise<Outcome> {
  const outcome: Outcome = { signup, accepted: false, total: 0, steps: {}, errors: {} };
  const started = performance.now();
  const step = async (name: Step, action: () => Promise<unknown>): Promise<boolean> => {
    const at = performance.now();
    try {
      await action();
      return true;
    } catch (error) {
      outcome.errors[name] = errorKind(error);
      return false;
    } finally {
      outcome.steps[name] = performance.now() - at;
    }
  };
  try {
    if (!(await step('connection test', () => readHealthDocument(firestore)))) return outcome;
    const inserted = await step('insert', () => addSignup(firestore, signup));
    if (!inserted) return outcome;
    outcome.accepted = true;
    const contact = addContactRequest(signup.email, signup.source);
    await step('add-contact', () => callable(stack, CALLABLES.addContact, contact));
    await step('thank-you', () => callable(stack, CALLABLES.sendThankYou, { email: signup.email }));
    return outcome;
  } finally {
    outcome.total = performance.now() - started;
  }
}

const ms = (value: number) => (Number.isFinite(value) ? `${Math.round(value)}` : '-');
const row = (label: string, cells: string[]) =>
  `  ${label.padEnd(18)}${cells.map((cell) => cell.padStart(8)).join('')}`;

function latencyRow(label: string, samples: number[]): string {
  return row(label, [
    ms(quantile(samples, 0.5)),
    ms(quantile(samples, 0.95)),
    ms(quantile(samples, 0.99)),
    ms(samples.length ? Math.max(...samples) : Number.NaN),
    String(samples.length),
  ]);
}

function countBy<T>(items: T[], key: (item: T) => string | undefined): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) {
    const k = key(item);
    if (k !== undefined) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return counts;
}

interface ScenarioFigures {
  scenario: string;
  signups: number;
  accepted: number;
  rushSeconds: number;
  throughputPerSecond: number;
  latencyMs: Record<string, { p50: number; p95: number; p99: number; n: number }>;
  errors: Record<Step, Record<string, number>>;
  stored: { missing: number; duplicated: number; unexpected: number };
  drainSeconds: number | null;
  boundSeconds: number;
  drainRatio: number | null;
  notInMailerLite: number;
  confirmedUpserts: number;
  thankYou: { messages: number; twiceMailed: number; resentCopies: number; unmailed: number };
  nothingLost: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function runScenario(
  info: StackInfo,
  services: Services,
  scenario: 'calm' | 'outage',
): Promise<ScenarioFigures> {
  await services.resetAll();
  await services.mailerLite.setLimits({ windowMs: WINDOW_MS, requestsPerWindow: MAILERLITE_PER_MINUTE });
  const requestsBefore = (await services.mailerLite.state()).requests.length;
  const signups = makeSignups(SIGNUPS, scenario);
  const clients = Array.from({ length: CLIENTS }, (_, i) => clientApp(info, i));
  const outcomes: Outcome[] = [];
  const spacingMs = (RUSH_SECONDS * 1000) / SIGNUPS;
  console.log(
    `\n== ${scenario}: ${SIGNUPS} sign-ups over ${RUSH_SECONDS} s from ${CLIENTS} clients (MailerLite window ${WINDOW_MS} ms)`,
  );
  const faults: Promise<void>[] = [];
  if (scenario === 'outage') {
    // MailerLite down for the first third of the rush; the mail server refusing from a sixth to a half.
    await services.mailerLite.setFaults({ down: true });
    faults.push(
      sleep((RUSH_SECONDS * 1000) / 3).then(() => services.mailerLite.clearFaults()),
      sleep((RUSH_SECONDS * 1000) / 6).then(async () => {
        await services.smtp.setFaults({ down: true });
        await sleep((RUSH_SECONDS * 1000) / 3);
        await services.smtp.clearFaults();
      }),
    );
  }
  // The Functions emulator runs one request at a time per worker process and starts a process for each
  // concurrent call beyond those idle (Cloud Functions serves up to 80 at once per instance, warm). Warm one
  // worker per client first, with calls that are refused at once, so the rush measures the queues, not
  // the emulator starting ~100 Node processes on this machine's cores.
  await Promise.all(
    Array.from({ length: CLIENTS }, () =>
      Promise.all([
        callable(info, CALLABLES.addContact, {}).catch(() => {}),
        callable(info, CALLABLES.sendThankYou, {}).catch(() => {}),
      ]),
    ),
  );
  const started = performance.now();
  let next = 0;
  await Promise.all(
    clients.map(async ({ firestore }) => {
      for (let i = next++; i < signups.length; i = next++) {
        const due = started + i * spacingMs;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        outcomes.push(await signUp(info, firestore, signups[i] as Signup));
      }
    }),
  );
  const rushSeconds = (performance.now() - started) / 1000;
  await Promise.all(clients.map(({ app }) => deleteApp(app)));
  await Promise.all(faults);

  const accepted = outcomes.filter((outcome) => outcome.accepted);
  const acceptedEmails = new Set(accepted.map((outcome) => outcome.signup.email));

  // Drained: every accepted contact in its form's group and every thank-you in the outbox, no sync pressed.
  let drainSeconds: number | null = null;
  let notInMailerLite = accepted.length;
  let unmailed = accepted.length;
  for (;;) {
    const state = await services.mailerLite.state();
    const groupNames = new Map(state.groups.map((group) => [group.id, group.name]));
    const subscribers = new Map(state.subscribers.map((subscriber) => [subscriber.email, subscriber]));
    notInMailerLite = accepted.filter(({ signup }) => {
      const groups = subscribers.get(signup.email)?.groups.map((id) => groupNames.get(id)) ?? [];
      return !groups.includes(MAILERLITE_GROUP_NAMES[signup.subscription_type]);
    }).length;
    const mailed = new Set((await services.smtp.messages()).flatMap((message) => message.to));
    unmailed = accepted.filter(({ signup }) => !mailed.has(signup.email)).length;
    const elapsed = performance.now() - started;
    if (notInMailerLite === 0 && drainSeconds === null) drainSeconds = elapsed / 1000;
    if ((notInMailerLite === 0 && unmailed === 0) || elapsed > DRAIN_LIMIT_MS) break;
    process.stdout.write(
      `\r   ${(elapsed / 1000).toFixed(0)} s: ${accepted.length - notInMailerLite}/${accepted.length} in MailerLite, ${accepted.length - unmailed}/${accepted.length} thanked   `,
    );
    await sleep(DRAIN_POLL_MS);
  }
  process.stdout.write('\n');
  // Anything sent twice would show by now.
  await sleep(5_000);

  const stored = await services.firestore.documents(COLLECTIONS.signups);
  const storedCounts = countBy(
    stored.filter(
      (document) =>
        acceptedEmails.has(String(document.data.email)) ||
        String(document.data.email).includes(`load-${scenario}-`),
    ),
    (document) => String(document.data.email),
  );
  const missing = [...acceptedEmails].filter((email) => !storedCounts.has(email)).length;
  const duplicated = [...storedCounts].filter(([, count]) => count > 1).length;
  const unexpected = [...storedCounts.keys()].filter((email) => !acceptedEmails.has(email)).length;
  const messages = (await services.smtp.messages()).filter((message) =>
    message.to.some((to) => acceptedEmails.has(to)),
  );
  // One message is one Message-ID. A copy under the same Message-ID is what SMTP leaves when the relay stored the
  // mail and went down before its 250 reached the worker (the outage's relay is stopped mid-transaction): the
  // worker cannot tell that from a refusal and sends again (RFC 5321, section 6.1: at least once), the same message,
  // which mailbox providers fold by its Message-ID. Counted apart; a second message (another Message-ID) fails.
  const idsByRecipient = new Map<string, string[]>();
  for (const message of messages) {
    for (const to of message.to) {
      idsByRecipient.set(to, [...(idsByRecipient.get(to) ?? []), String(message.messageId)]);
    }
  }
  const mailCounts = new Map([...idsByRecipient].map(([to, ids]) => [to, new Set(ids).size]));
  const twiceMailed = [...mailCounts].filter(([, count]) => count > 1).length;
  const resentCopies = [...idsByRecipient].reduce((sum, [, ids]) => sum + ids.length - new Set(ids).size, 0);
  const state = await services.mailerLite.state();
  const confirmedUpserts = state.requests
    .slice(requestsBefore)
    .filter(
      (request) => request.method === 'POST' && request.path === '/api/subscribers' && request.status < 300,
    ).length;

  // MailerLite's own bound: its limit lets one upsert a request through, 120 a (compressed) minute; the rush
  // itself takes RUSH_SECONDS. The queue cannot finish before either.
  const boundSeconds = Math.max(rushSeconds, (accepted.length / MAILERLITE_PER_MINUTE) * (WINDOW_MS / 1000));
  // Cloud Tasks delivers at least once: a task whose answer was lost (an outage, a deadline) runs again.
  // MailerLite's upsert is idempotent, so a repeat changes nothing there; the thank-you is guarded by its
  // record. A duplicate is a contact in MailerLite twice or in the wrong group, or a person mailed twice.
  const nothingLost = missing + duplicated + unexpected + notInMailerLite + twiceMailed + unmailed === 0;

  const latencySamples: Record<string, number[]> = {
    'whole sign-up': accepted.map((outcome) => outcome.total),
    ...Object.fromEntries(
      STEPS.map((step) => [
        step,
        outcomes.flatMap(({ steps }) => (steps[step] === undefined ? [] : [steps[step]])),
      ]),
    ),
  };
  const errorsByStep = Object.fromEntries(
    STEPS.map((step) => [step, Object.fromEntries(countBy(outcomes, (outcome) => outcome.errors[step]))]),
  ) as Record<Step, Record<string, number>>;
  const describeErrors = (step: Step) => {
    const entries = Object.entries(errorsByStep[step]);
    const total = entries.reduce((sum, [, count]) => sum + count, 0);
    return total === 0 ? '0' : `${total} (${entries.map(([kind, count]) => `${kind}: ${count}`).join(', ')})`;
  };
  const drainRatio = drainSeconds === null ? null : drainSeconds / boundSeconds;

  console.log(
    `  rush              ${rushSeconds.toFixed(1)} s, ${(outcomes.length / rushSeconds).toFixed(1)} sign-ups/s`,
  );
  console.log(row('latency (ms)', ['p50', 'p95', 'p99', 'max', 'n']));
  for (const [name, samples] of Object.entries(latencySamples)) console.log(latencyRow(`  ${name}`, samples));
  console.log('  errors');
  for (const step of STEPS) console.log(`    ${step.padEnd(16)}${describeErrors(step)}`);
  console.log(`  accepted          ${accepted.length}/${SIGNUPS}`);
  console.log(
    `  stored once       ${accepted.length - missing - duplicated}/${accepted.length} (missing ${missing}, duplicated ${duplicated}, not accepted but stored ${unexpected})`,
  );
  console.log(
    `  in MailerLite     ${accepted.length - notInMailerLite}/${accepted.length} in their form's group, no sync pressed; ${confirmedUpserts} upserts confirmed`,
  );
  console.log(
    `  thank-you mails   ${messages.length} for ${accepted.length} accepted: ${twiceMailed} address(es) sent a second message, ${unmailed} unmailed; ${resentCopies} cop${resentCopies === 1 ? 'y' : 'ies'} resent under the same Message-ID (the relay stopped before its reply)`,
  );
  console.log(
    `  drained in        ${drainSeconds === null ? 'NOT DRAINED' : `${drainSeconds.toFixed(1)} s`} from the first sign-up; MailerLite's bound ${boundSeconds.toFixed(1)} s (${accepted.length} upserts at ${MAILERLITE_PER_MINUTE} per ${WINDOW_MS / 1000} s window, or the rush); ratio ${drainRatio === null ? '-' : drainRatio.toFixed(3)}${scenario === 'calm' ? ` (target <= 1.15: ${drainRatio !== null && drainRatio <= 1.15 ? 'met' : 'MISSED'})` : ''}`,
  );
  console.log(`  verdict           ${nothingLost ? 'nothing lost, nothing twice' : 'LOST OR DUPLICATED'}`);
  return {
    scenario,
    signups: SIGNUPS,
    accepted: accepted.length,
    rushSeconds,
    throughputPerSecond: outcomes.length / rushSeconds,
    latencyMs: Object.fromEntries(
      Object.entries(latencySamples).map(([name, samples]) => [
        name,
        {
          p50: quantile(samples, 0.5),
          p95: quantile(samples, 0.95),
          p99: quantile(samples, 0.99),
          n: samples.length,
        },
      ]),
    ),
    errors: errorsByStep,
    stored: { missing, duplicated, unexpected },
    drainSeconds,
    boundSeconds,
    drainRatio,
    notInMailerLite,
    confirmedUpserts,
    thankYou: { messages: messages.length, twiceMailed, resentCopies, unmailed },
    nothingLost,
  };
}

console.log('bench:load: starting a stack on free ports (it builds the site and the functions first)...');
// The contact queue's share of MailerLite's minute, compressed as the stand-in's window is. Every sign-up's
// thank-you is counted, so the mail budget is lifted out of the way.
const env = {
  GOODY_MAILERLITE_TASKS_PER_MINUTE: String(QUEUE_PER_MINUTE * COMPRESS),
  GOODY_MAIL_PER_HOUR: '1000000',
};
await benchOnStack('load', env, async (stack, missed) => {
  const info = stack.info;
  const services = new Services(info);
  const scenarios: ScenarioFigures[] = [];
  if (!args['no-calm']) scenarios.push(await runScenario(info, services, 'calm'));
  if (!args['no-outage']) scenarios.push(await runScenario(info, services, 'outage'));
  const calm = scenarios.find((figures) => figures.scenario === 'calm');
  if (scenarios.some((figures) => !figures.nothingLost)) missed();
  if (calm && !(calm.drainRatio !== null && calm.drainRatio <= 1.15)) missed();

  const figures = {
    at: new Date().toISOString(),
    signups: SIGNUPS,
    clients: CLIENTS,
    rushSeconds: RUSH_SECONDS,
    compress: COMPRESS,
    mailerLiteWindowMs: WINDOW_MS,
    contactQueuePerMinute: QUEUE_PER_MINUTE,
    scenarios,
  };
  writeResults('load', figures);
});
