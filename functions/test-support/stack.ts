// Emulator, stand-ins and helpers the functions' tests share. Firestore is the Firebase Firestore emulator
// that vitest's global setup starts once (test-support/firestore-emulator.setup.ts); each harness has a
// project of its own there, so test files running in parallel never see each other's documents. MailerLite
// and SMTP are the stand-ins in dev/, started per test file on ephemeral loopback ports. Everything is
// reached with the real clients (firebase-admin, fetch, nodemailer), never with mocks.

import { randomUUID } from 'node:crypto';
import { deleteApp, initializeApp } from 'firebase-admin/app';
import type { DocumentReference, Firestore } from 'firebase-admin/firestore';
import { getFirestore } from 'firebase-admin/firestore';
import { HttpsError } from 'firebase-functions/v2/https';
import { expect, inject } from 'vitest';
import {
  type MailerLiteStandIn,
  type MailerLiteStandInOptions,
  startMailerLiteStandIn,
} from '../../dev/mailerlite/index.ts';
import { type SmtpOutbox, startSmtpOutbox } from '../../dev/smtp/index.ts';
import type {} from '../../tests/support/firestore-emulator.setup.ts';
import { clearFirestoreEmulator, setFirestoreRules } from '../../tests/support/firestore-emulator.ts';
import { type Clock, systemClock } from '../src/clock';
import {
  emailProblem,
  SIGNUPS,
  type SignupSource,
  SUPPRESSIONS,
  type SubscriptionType,
  subscriptionTypeOf,
} from '../src/contract';
import type { LogEvent, LogFields, Logger } from '../src/logs';
import {
  type BatchRequest,
  type BatchResponse,
  MailerLiteClient,
  type MailerLiteClientOptions,
  type MailerLiteMethod,
  type MailerLiteResponse,
  type RequestOptions,
} from '../src/mailerlite/client';
import { mailboxKey } from '../src/privacy/mailbox-key';
import { Mailboxes } from '../src/privacy/mailboxes';
import { MAILBOX_KEY_FIELD } from '../src/signups/lookup';

export const PROJECT_ID = 'demo-goody';

export interface FirestoreHarness {
  /** This harness's own project in the emulator: demo-goody-<random>. */
  projectId: string;
  /** The emulator's host:port (FIRESTORE_EMULATOR_HOST). */
  hostPort: string;
  db: Firestore;
  /** Deletes every document of this harness's project. */
  reset(): Promise<void>;
  /**
   * Loads security rules for this project, which bind every client but the Admin SDK's owner credential:
   * `refusingClient()` is such a client, to make a write fail for real.
   */
  setRules(rules: string): Promise<void>;
  /** firebase-admin's Firestore with an ordinary (non-owner) credential, so the project's rules apply to it. */
  refusingClient(): Firestore;
  stop(): Promise<void>;
}

export async function startFirestore(): Promise<FirestoreHarness> {
  const hostPort = inject('firestoreEmulatorHost');
  const projectId = `${PROJECT_ID}-${randomUUID().slice(0, 8)}`;
  const app = initializeApp({ projectId }, `functions-test-${randomUUID()}`);
  const apps = [app];
  const db = withEmulator(hostPort, () => getFirestore(app));
  return {
    projectId,
    hostPort,
    db,
    reset: () => clearFirestoreEmulator(hostPort, projectId),
    setRules: (rules) => setFirestoreRules(hostPort, projectId, rules),
    refusingClient() {
      const refusing = initializeApp({ projectId }, `functions-test-refusing-${randomUUID()}`);
      apps.push(refusing);
      // The Admin SDK sends `Authorization: Bearer owner` to an emulator, which skips the rules; an unsigned
      // token of an ordinary user does not. Set while FIRESTORE_EMULATOR_HOST still names the emulator.
      return withEmulator(hostPort, () => {
        const client = getFirestore(refusing);
        client.settings({ customHeaders: { Authorization: `Bearer ${unsignedToken('functions-test')}` } });
        return client;
      });
    },
    stop: async () => {
      await Promise.all(apps.map((each) => deleteApp(each)));
    },
  };
}

/** @google-cloud/firestore reads FIRESTORE_EMULATOR_HOST in its constructor, which getFirestore runs. */
function withEmulator<T>(hostPort: string, make: () => T): T {
  const previous = process.env.FIRESTORE_EMULATOR_HOST;
  process.env.FIRESTORE_EMULATOR_HOST = hostPort;
  try {
    return make();
  } finally {
    if (previous === undefined) delete process.env.FIRESTORE_EMULATOR_HOST;
    else process.env.FIRESTORE_EMULATOR_HOST = previous;
  }
}

/** An unsigned ID token, which the emulator accepts as a signed-in user's (what rules-unit-testing sends). */
function unsignedToken(uid: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: uid, user_id: uid, iat: now, exp: now + 3600, aud: 'demo', iss: 'https://securetoken.google.com/demo' })}.`;
}

/** MailerLite as the launcher runs it: an account with a `source` custom field. */
export function startMailerLite(options: MailerLiteStandInOptions = {}): Promise<MailerLiteStandIn> {
  return startMailerLiteStandIn({ quiet: true, customFields: ['source'], ...options });
}

/** MailerLite's documented limits, which a test that changed them must get back. */
export const MAILERLITE_LIMITS = {
  windowMs: 60_000,
  requestsPerWindow: 120,
  importsPerWindow: 5,
  fractionalRetryAfter: false,
};

/** Clears the stand-in's data, faults and windows, and restores its documented limits. */
export function resetMailerLite(ml: MailerLiteStandIn): void {
  ml.reset();
  ml.setLimits(MAILERLITE_LIMITS);
}

/** Deletes a group the way an operator would: through MailerLite's API (DELETE /api/groups/{id}). */
export async function deleteGroupInMailerLite(ml: MailerLiteStandIn, id: string): Promise<void> {
  const response = await fetch(`${ml.baseUrl}/groups/${id}`, {
    method: 'DELETE',
    headers: { Authorization: `Bearer ${ml.apiKey}`, Accept: 'application/json' },
  });
  expect(response.status, 'DELETE /api/groups/{id}').toBe(204);
}

/** Empties the stand-in's account through its HTTP control (as the e2e suite does between tests). */
export async function resetMailerLiteOverHttp(ml: MailerLiteStandIn): Promise<void> {
  const response = await fetch(`${ml.url}/__control/reset`, { method: 'POST' });
  expect(response.ok, 'POST /__control/reset').toBe(true);
}

/** Group look-ups (GET /api/groups) and creations (POST /api/groups) in the stand-in's request log. */
export function groupRequests(ml: MailerLiteStandIn): { lookups: number; creations: number } {
  const requests = ml.state.requests;
  return {
    lookups: requests.filter((r) => r.method === 'GET' && r.path.split('?')[0] === '/api/groups').length,
    creations: requests.filter((r) => r.method === 'POST' && r.path === '/api/groups').length,
  };
}

export function startOutbox(): Promise<SmtpOutbox> {
  return startSmtpOutbox({ quiet: true });
}

/**
 * Sets in process.env the params functions/.env.local and .secret.local hold when the launcher runs the
 * emulator, pointed at these stand-ins: what the onCall wrappers read through firebase-functions/params.
 */
export function setLauncherParams(standIns: {
  firestore: FirestoreHarness;
  ml: MailerLiteStandIn;
  outbox: SmtpOutbox;
}): void {
  const { firestore, ml, outbox } = standIns;
  Object.assign(process.env, {
    GCLOUD_PROJECT: firestore.projectId,
    FIRESTORE_EMULATOR_HOST: firestore.hostPort,
    MAILERLITE_API_KEY: ml.apiKey,
    MAILERLITE_BASE_URL: ml.baseUrl,
    MAILERLITE_GROUP_UPDATES: 'GOODY launch updates',
    MAILERLITE_GROUP_CLUB: 'GOODY Club',
    SMTP_URL: outbox.url,
    MAIL_FROM: 'GOODY <hello@goody.example>',
    UNSUBSCRIBE_URL: 'http://127.0.0.1:5001/demo-goody/us-central1/unsubscribe',
    UNSUBSCRIBE_SECRET: 'test-unsubscribe-secret',
    MAILBOX_KEY_SECRET: MAILBOX_SECRET,
  });
}

/** Options for a client of the stand-in with short waits, so failure paths take milliseconds rather than seconds. */
function shortWaitOptions(
  ml: MailerLiteStandIn,
  options: Partial<MailerLiteClientOptions>,
): MailerLiteClientOptions {
  return {
    apiKey: ml.apiKey,
    baseUrl: ml.baseUrl,
    backoffBaseMs: 20,
    backoffMaxMs: 100,
    timeoutMs: 2_000,
    ...options,
  };
}

/** A client with short waits, so failure paths take milliseconds rather than seconds. */
export function mailerLiteClient(
  ml: MailerLiteStandIn,
  options: Partial<MailerLiteClientOptions> = {},
): MailerLiteClient {
  return new MailerLiteClient(shortWaitOptions(ml, options));
}

/** An upsert MailerLite confirmed (2xx), alone or inside a batch. */
export interface ConfirmedUpsert {
  email: string;
  groups: string[];
}

/**
 * The real client, sending real requests, that also writes down every upsert MailerLite confirmed:
 * what the stand-in's request log cannot show (the addresses and groups inside a batch).
 */
export class RecordingMailerLiteClient extends MailerLiteClient {
  constructor(
    options: MailerLiteClientOptions,
    readonly confirmed: ConfirmedUpsert[],
  ) {
    super(options);
  }

  override async request<T>(
    method: MailerLiteMethod,
    path: string,
    body?: unknown,
    options?: RequestOptions,
  ): Promise<MailerLiteResponse<T>> {
    const response = await super.request<T>(method, path, body, options);
    const upsert = (value: unknown) => {
      const { email, groups } = value as { email: string; groups?: string[] };
      this.confirmed.push({ email, groups: groups ?? [] });
    };
    if (method === 'POST' && path === '/subscribers') upsert(body);
    if (method === 'POST' && path === '/batch') {
      const { requests } = body as { requests: BatchRequest[] };
      const { responses } = response.body as { responses: BatchResponse[] };
      responses.forEach((entry, index) => {
        if (entry.code < 300 && requests[index]?.path === 'api/subscribers') upsert(requests[index]?.body);
      });
    }
    return response;
  }
}

export function recordingMailerLiteClient(
  ml: MailerLiteStandIn,
  confirmed: ConfirmedUpsert[],
  options: Partial<MailerLiteClientOptions> = {},
): RecordingMailerLiteClient {
  return new RecordingMailerLiteClient(shortWaitOptions(ml, options), confirmed);
}

/** Confirmed upserts that brought MailerLite nothing new: every (address, group) in them was confirmed before. */
export function repeatedUpserts(confirmed: ConfirmedUpsert[]): number {
  const seen = new Set<string>();
  let repeated = 0;
  for (const { email, groups } of confirmed) {
    const pairs = groups.map((group) => `${group} ${email}`);
    if (pairs.every((p) => seen.has(p))) repeated += 1;
    for (const p of pairs) seen.add(p);
  }
  return repeated;
}

export interface LogEntry {
  severity: 'info' | 'warn' | 'error';
  event: LogEvent;
  fields: LogFields;
}

export interface RecordingLogger extends Logger {
  entries: LogEntry[];
  events(): LogEvent[];
  /** Everything logged, as one string, to search for what must never be there. */
  text(): string;
}

export function recordingLogger(): RecordingLogger {
  const entries: LogEntry[] = [];
  const record =
    (severity: LogEntry['severity']) =>
    (event: LogEvent, fields: LogFields = {}) => {
      entries.push({ severity, event, fields });
    };
  return {
    entries,
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
    events: () => entries.map((entry) => entry.event),
    text: () => JSON.stringify(entries),
  };
}

/** The system clock seen `offsetMs` later: for leases that must look expired. */
export function clockAhead(offsetMs: number): Clock {
  return { now: () => Date.now() + offsetMs, sleep: systemClock.sleep };
}

export interface Signup {
  email: string;
  subscription_type: SubscriptionType;
  source: SignupSource;
}

/** The two forms' sign-up fields, from the contract's pairing. */
export const HERO = { subscription_type: subscriptionTypeOf('hero_form'), source: 'hero_form' } as const;
export const FINAL = { subscription_type: subscriptionTypeOf('final_cta'), source: 'final_cta' } as const;

/** MAILBOX_KEY_SECRET in the tests (vitest.config.mts gives the logs the same). */
export const MAILBOX_SECRET = 'test-mailbox-key-secret';
/** UNSUBSCRIBE_SECRET in the tests. */
export const UNSUBSCRIBE_SECRET = 'test-unsubscribe-secret';

/** The mailboxes' keyed stores as a function builds them once per invocation, under the tests' secrets. */
export function testMailboxes(db: Firestore): Mailboxes {
  return new Mailboxes(db, { mailbox: MAILBOX_SECRET, unsubscribe: UNSUBSCRIBE_SECRET });
}

/** Puts the address's mailbox on the suppression list, as a finished erasure leaves it. */
export async function suppressMailbox(db: Firestore, email: string): Promise<DocumentReference> {
  const ref = db.collection(SUPPRESSIONS).doc(mailboxKey(MAILBOX_SECRET, email));
  await ref.set({ erased_at: new Date() });
  return ref;
}

/**
 * Stores sign-ups as the page does (auto ids, the four fields), with created_at one millisecond
 * apart in the order given so that "the order they were made in" is known to the test. Each row of a
 * valid address also gets its `mailbox_key`, as the index-signup trigger writes it a moment later;
 * `keyed: false` leaves it out (the moment before the trigger ran).
 */
export async function seedSignups(
  db: Firestore,
  signups: Array<Signup | Record<string, unknown>>,
  start = Date.now(),
  { keyed = true }: { keyed?: boolean } = {},
) {
  const collection = db.collection(SIGNUPS);
  for (let offset = 0; offset < signups.length; offset += 400) {
    const batch = db.batch();
    signups.slice(offset, offset + 400).forEach((signup, index) => {
      const key =
        keyed && emailProblem(signup.email) === null
          ? { [MAILBOX_KEY_FIELD]: mailboxKey(MAILBOX_SECRET, signup.email as string) }
          : {};
      batch.create(collection.doc(), { created_at: new Date(start + offset + index), ...signup, ...key });
    });
    await batch.commit();
  }
}

/** Awaits a call expected to fail with an HttpsError of `code`; returns the error. */
export async function expectHttpsError(
  call: Promise<unknown>,
  code: HttpsError['code'],
): Promise<HttpsError> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error, `expected an HttpsError ${code}`).toBeInstanceOf(HttpsError);
  expect((error as HttpsError).code).toBe(code);
  return error as HttpsError;
}

/**
 * Bodies every callable must refuse as invalid-argument: missing, wrong types, arrays, objects,
 * 10 kB strings, control characters, a non-address, and Unicode addresses.
 */
export const BAD_EMAILS: Array<[string, unknown]> = [
  ['a number', 42],
  ['a boolean', true],
  ['null', null],
  ['an array', ['kid@example.com']],
  ['an object', { address: 'kid@example.com' }],
  ['a 10 kB string', `${'a'.repeat(10_240)}@example.com`],
  [
    'an address of 255 characters',
    `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`,
  ],
  ['a newline (header injection)', 'kid@example.com\nBcc: everyone@example.com'],
  ['a NUL byte', 'kid@example.com\u0000'],
  ['a tab', 'kid\t@example.com'],
  ['a line separator', 'kid@example.com\u2028'],
  ['no @', 'kid.example.com'],
  ['two @', 'kid@@example.com'],
  ['no domain dot', 'kid@localhost'],
  ['an empty string', ''],
  ['spaces only', '   '],
  ['a display name', 'Kid <kid@example.com>'],
  ['a double dot', 'kid..teen@example.com'],
  ['a numeric top-level domain', 'kid@example.123'],
  ['a Unicode local part', 'élève@example.com'],
  ['a Unicode domain', 'kid@bücher.example'],
  ['Cyrillic look-alike letters', 'kid@еxample.com'],
  ['an emoji', 'kid😀@example.com'],
  ['a full-width @', 'kid＠example.com'],
];

export interface RecordedTask {
  queue: string;
  /** The task's name (its id last). */
  name: string;
  payload: unknown;
}

/**
 * The enqueue endpoint of the Cloud Tasks emulator (what firebase-admin calls when CLOUD_TASKS_EMULATOR_HOST
 * is set), on loopback, keeping the tasks instead of dispatching them: a test then runs each through its
 * worker itself. A task name seen before answers 409, as Cloud Tasks does.
 */
export async function startTasksRecorder(): Promise<{
  hostPort: string;
  tasks: RecordedTask[];
  /** Forgets every task and every name seen (a queue purged). */
  clear(): void;
  stop(): Promise<void>;
}> {
  const { createServer } = await import('node:http');
  const tasks: RecordedTask[] = [];
  const names = new Set<string>();
  const server = createServer((request, response) => {
    const match = /^\/projects\/[^/]+\/locations\/[^/]+\/queues\/([^/]+)\/tasks$/.exec(request.url ?? '');
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || !match) {
        response.writeHead(404).end();
        return;
      }
      const { task } = JSON.parse(Buffer.concat(chunks).toString()) as {
        task: { name?: string; httpRequest: { body: string } };
      };
      const name = task.name ?? `${match[1]}/${randomUUID()}`;
      if (names.has(name)) {
        response
          .writeHead(409, { 'content-type': 'text/plain' })
          .end('A task with the same name already exists');
        return;
      }
      names.add(name);
      const payload = JSON.parse(Buffer.from(task.httpRequest.body, 'base64').toString()) as {
        data: unknown;
      };
      tasks.push({ queue: match[1] as string, name, payload: payload.data });
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ task }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    hostPort: `127.0.0.1:${port}`,
    tasks,
    clear: () => {
      tasks.length = 0;
      names.clear();
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
