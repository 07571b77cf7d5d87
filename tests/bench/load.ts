// `npm run bench:load`: many sign-ups at once through the local stack, as the site makes them, then the
// admin sync until nothing remains; prints throughput, latency and errors, and checks that nothing was lost.
//
//   npm run bench:load [-- --signups 500 --clients 20 --window-ms 60000]
//
// Each sign-up is the site's sequence: the connection test and the insert with the Firestore Lite SDK (the
// web app's own SDK, here in Node, against the Firestore stand-in), then add-contact-to-mailerlite and
// send-thank-you-email over the callable HTTP protocol. A sign-up is accepted once its insert succeeded, as
// the site then shows success whatever the two callables do. The bar: every accepted sign-up is stored once,
// reaches MailerLite (in its form's group) by the end of the syncs, and gets at most one thank-you.
//
// Starts its own stack on free ports (about a minute: it builds first), or, with GOODY_USE_RUNNING_STACK=1,
// uses the one at `npm start`'s ports (or its GOODY_*_PORT variables), whose data it wipes. The MailerLite
// stand-in keeps MailerLite's limits (120 requests and 5 imports a window); --window-ms shortens the window.
// Figures go to bench-results/load-<timestamp>.json and bench-results/load-latest.json too.

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  addContactRequest,
  CALLABLES,
  COLLECTIONS,
  HEALTH_DOCUMENT,
  type NewSignup,
  type SignupSource,
  SOURCES,
  subscriptionTypeOf,
} from '@goody/contract';
import { deleteApp, type FirebaseApp, initializeApp } from 'firebase/app';
import {
  addDoc,
  collection,
  connectFirestoreEmulator,
  doc,
  getDoc,
  getFirestore,
  serverTimestamp,
  setLogLevel,
} from 'firebase/firestore/lite';
import { loopbackOnlyEnv } from '../../dev/loopback-env.ts';
import { MAILERLITE_GROUP_NAMES, Services, type SyncReply } from '../e2e/support/services.ts';
import {
  PROJECT_ID,
  type RunningStack,
  repoRoot,
  runningStackFromEnv,
  type StackInfo,
  startStack,
} from '../e2e/support/stack.ts';

const resultsDir = path.join(repoRoot, 'bench-results');

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
    signups: { type: 'string', default: '500' },
    clients: { type: 'string', default: '20' },
    'window-ms': { type: 'string', default: '60000' },
  },
});
const SIGNUPS = Number(args.signups);
const CLIENTS = Number(args.clients);
const WINDOW_MS = Number(args['window-ms']);
for (const [name, value] of [
  ['--signups', SIGNUPS],
  ['--clients', CLIENTS],
  ['--window-ms', WINDOW_MS],
] as const) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
}
// The longest a sync may run (540 s) and a margin: a run ends itself before its deadline.
const SYNC_CALL_TIMEOUT_MS = 600_000;
const MAX_SYNC_RUNS = 30;

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

function makeSignups(n: number): Signup[] {
  const run = Date.now().toString(36);
  return Array.from({ length: n }, (_, i) =>
    signupOf(`load-${run}-${i}@example.com`, SOURCES[i % SOURCES.length] as SignupSource),
  );
}

/** One visitor's browser: its own Firebase app, as each page load has. */
function clientApp(stack: StackInfo, index: number): FirebaseApp {
  const app = initializeApp({ projectId: PROJECT_ID, apiKey: 'demo-api-key' }, `load-client-${index}`);
  const { hostname, port } = new URL(stack.firestoreUrl);
  connectFirestoreEmulator(getFirestore(app), hostname, Number(port));
  return app;
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

async function signUp(stack: StackInfo, app: FirebaseApp, signup: Signup): Promise<Outcome> {
  const outcome: Outcome = { signup, accepted: false, total: 0, steps: {}, errors: {} };
  const db = getFirestore(app);
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
    if (
      !(await step('connection test', () => getDoc(doc(db, HEALTH_DOCUMENT.collection, HEALTH_DOCUMENT.id))))
    )
      return outcome;
    const inserted = await step('insert', () =>
      addDoc(collection(db, COLLECTIONS.signups), { ...signup, created_at: serverTimestamp() }),
    );
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

function failedAt(outcomes: Outcome[], step: Step): number {
  return outcomes.filter((outcome) => outcome.errors[step] !== undefined).length;
}

let stack: RunningStack | undefined;
let exitCode = 0;
try {
  let info = runningStackFromEnv();
  if (info) {
    console.log(`bench:load: using the running stack at ${info.siteUrl}; its data and outbox are wiped.`);
  } else {
    console.log('bench:load: starting a stack on free ports (it builds the site and the functions first)...');
    stack = await startStack({ logFile: path.join(repoRoot, 'tests', '.artifacts', 'bench-load-stack.log') });
    info = stack.info;
  }
  const services = new Services(info);
  await services.resetAll();
  // Fresh windows with MailerLite's limits (only the window's length may be shortened).
  await services.mailerLite.setLimits({ windowMs: WINDOW_MS, requestsPerWindow: 120, importsPerWindow: 5 });

  const signups = makeSignups(SIGNUPS);
  const apps = Array.from({ length: CLIENTS }, (_, i) => clientApp(info, i));
  const outcomes: Outcome[] = [];
  let next = 0;
  console.log(
    `bench:load: ${SIGNUPS} sign-ups from ${CLIENTS} concurrent clients against ${info.siteUrl}...`,
  );
  const loadStarted = performance.now();
  await Promise.all(
    apps.map(async (app) => {
      for (let i = next++; i < signups.length; i = next++) {
        outcomes.push(await signUp(info, app, signups[i] as Signup));
      }
    }),
  );
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  await Promise.all(apps.map((app) => deleteApp(app)));

  const accepted = outcomes.filter((outcome) => outcome.accepted);
  const acceptedEmails = new Set(accepted.map((outcome) => outcome.signup.email));

  // Stored once: exactly one document per accepted address, and none for a refused one.
  const stored = await services.firestore.documents(COLLECTIONS.signups);
  const storedCounts = countBy(stored, (document) => String(document.data.email));
  const missing = [...acceptedEmails].filter((email) => !storedCounts.has(email));
  const duplicated = [...storedCounts].filter(([, count]) => count > 1).map(([email]) => email);
  const unexpected = [...storedCounts.keys()].filter((email) => !acceptedEmails.has(email));

  // The syncs, as the operator presses the button: until a run reports nothing remaining.
  const syncRuns: (SyncReply & { seconds: number })[] = [];
  const syncStarted = performance.now();
  while (syncRuns.length < MAX_SYNC_RUNS) {
    const at = performance.now();
    const reply = await services.sync({ timeoutMs: SYNC_CALL_TIMEOUT_MS });
    syncRuns.push({ ...reply, seconds: (performance.now() - at) / 1000 });
    console.log(
      `  sync run ${syncRuns.length}: ${reply.success ? 'ok' : 'failed'}, synced ${reply.synced}, remaining ${reply.remaining ?? '?'} (${((performance.now() - at) / 1000).toFixed(1)} s)${reply.error ? `: ${reply.error}` : ''}`,
    );
    if (reply.success && reply.remaining === 0) break;
  }
  const syncSeconds = (performance.now() - syncStarted) / 1000;

  // In MailerLite, in the group of the form it came from.
  const state = await services.mailerLite.state();
  const groupNames = new Map(state.groups.map((group) => [group.id, group.name]));
  const subscribers = new Map(state.subscribers.map((subscriber) => [subscriber.email, subscriber]));
  const notInMailerLite = accepted.filter(({ signup }) => {
    const groups = subscribers.get(signup.email)?.groups.map((id) => groupNames.get(id)) ?? [];
    return !groups.includes(MAILERLITE_GROUP_NAMES[signup.subscription_type]);
  });

  // Thank-you mails: at most one per address; a missing one is a send-thank-you call that failed.
  const messages = await services.smtp.messages();
  const mailCounts = countBy(
    messages.flatMap((message) => message.to),
    (to) => to,
  );
  const twiceMailed = [...mailCounts].filter(([, count]) => count > 1).length;
  const thankYouFailed = failedAt(accepted, 'thank-you');
  const unmailed = accepted.filter(({ signup }) => !mailCounts.has(signup.email)).length;

  const lost = missing.length + duplicated.length + unexpected.length + notInMailerLite.length + twiceMailed;
  const syncFinished = syncRuns.at(-1)?.success === true && syncRuns.at(-1)?.remaining === 0;

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

  console.log('');
  console.log(
    `bench:load: ${SIGNUPS} sign-ups, ${CLIENTS} concurrent clients, MailerLite window ${WINDOW_MS} ms`,
  );
  console.log(`  duration          ${loadSeconds.toFixed(1)} s`);
  console.log(`  throughput        ${(outcomes.length / loadSeconds).toFixed(1)} sign-ups/s`);
  console.log(row('latency (ms)', ['p50', 'p95', 'p99', 'max', 'n']));
  for (const [name, samples] of Object.entries(latencySamples)) console.log(latencyRow(`  ${name}`, samples));
  console.log('  errors');
  for (const step of STEPS) console.log(`    ${step.padEnd(16)}${describeErrors(step)}`);
  console.log(`  accepted          ${accepted.length}/${SIGNUPS}`);
  console.log(
    `  stored once       ${accepted.length - missing.length - duplicated.length}/${accepted.length} (missing ${missing.length}, duplicated ${duplicated.length}, not accepted but stored ${unexpected.length})`,
  );
  console.log(
    `  syncs             ${syncRuns.length} run(s), ${syncRuns.reduce((sum, run) => sum + run.synced, 0)} contacts synced in ${syncSeconds.toFixed(1)} s${syncFinished ? '' : ' (did NOT finish)'}`,
  );
  console.log(
    `  in MailerLite     ${accepted.length - notInMailerLite.length}/${accepted.length} in their form's group (${accepted.length - failedAt(accepted, 'add-contact')} by add-contact at once, the rest by the syncs)`,
  );
  console.log(
    `  thank-you mails   ${messages.length} for ${accepted.length} accepted: ${twiceMailed} address(es) mailed twice, ${unmailed} unmailed (${thankYouFailed} send-thank-you call(s) failed)`,
  );
  console.log(
    `  verdict           ${lost === 0 && syncFinished ? 'nothing lost' : 'LOST OR DUPLICATED SIGN-UPS'}`,
  );
  if (lost > 0 || !syncFinished) exitCode = 1;

  const figures = {
    at: new Date().toISOString(),
    signups: SIGNUPS,
    clients: CLIENTS,
    mailerLiteWindowMs: WINDOW_MS,
    seconds: loadSeconds,
    throughputPerSecond: outcomes.length / loadSeconds,
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
    accepted: accepted.length,
    stored: { missing: missing.length, duplicated: duplicated.length, unexpected: unexpected.length },
    syncs: syncRuns,
    notInMailerLite: notInMailerLite.length,
    thankYou: { messages: messages.length, twiceMailed, unmailed, failedCalls: thankYouFailed },
    nothingLost: lost === 0 && syncFinished,
  };
  mkdirSync(resultsDir, { recursive: true });
  const json = `${JSON.stringify(figures, null, 2)}\n`;
  writeFileSync(path.join(resultsDir, `load-${new Date().toISOString().replace(/[:.]/g, '-')}.json`), json);
  writeFileSync(path.join(resultsDir, 'load-latest.json'), json);
} catch (error) {
  console.error('bench:load failed:', error);
  exitCode = 1;
} finally {
  await stack?.stop().catch((error: unknown) => {
    console.error('bench:load: stopping the stack:', error);
    exitCode = 1;
  });
}
process.exit(exitCode);
