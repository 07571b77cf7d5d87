// The sync callable's tests share one harness: a Firestore emulator and the MailerLite stand-in for the file,
// reset before each case, and the helpers that build its dependencies and read what it did. Split over two files
// (sync-callable.test.ts, sync-callable.failures.test.ts) so that Vitest's two workers share its cases.
import type { Firestore } from 'firebase-admin/firestore';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { MailerLiteStandIn } from '../../stand-ins/mailerlite/index.ts';
import { handleSyncEmailsToMailerlite, type SyncDeps } from '../src/callables/sync-callable';
import { systemClock } from '../src/clock';
import type { MailerLiteClientOptions } from '../src/mailerlite/client';
import { clearGroupCache } from '../src/mailerlite/groups';
import { SYNC_STATE_COLLECTION, SYNC_STATE_DOC, type SyncStateDoc } from '../src/sync/state';
import { type FirestoreHarness, startFirestore } from './firestore';
import { type RecordingLogger, recordingLogger } from './logs';
import {
  type ConfirmedUpsert,
  recordingMailerLiteClient,
  resetMailerLite,
  startMailerLite,
} from './mailerlite';
import { FINAL, HERO, type Signup, testMailboxes } from './signups';
export let firestore: FirestoreHarness;
export let db: Firestore;
export let ml: MailerLiteStandIn;
export let logger: RecordingLogger;
/** Every upsert MailerLite confirmed in the test, across all its runs. */
export let confirmed: ConfirmedUpsert[];

export const GROUPS = { updates: 'GOODY launch updates', club: 'GOODY Club' };
// MailerLite's limits with the minute compressed to a second, so a test syncs a thousand sign-ups
// in a few seconds through the same 429s and Retry-After waits a real minute would bring.
export const TEST_LIMITS = {
  windowMs: 1_000,
  requestsPerWindow: 120,
  importsPerWindow: 5,
  fractionalRetryAfter: true,
};

/** Registers the file's hooks: the emulator and the stand-in for the file, a clean slate before each case. */
export function useSyncHarness(): void {
  beforeAll(async () => {
    [firestore, ml] = await Promise.all([startFirestore(), startMailerLite()]);
    db = firestore.db;
  });
  afterAll(async () => {
    await Promise.all([firestore.stop(), ml.stop()]);
  });
  beforeEach(async () => {
    await firestore.reset();
    resetMailerLite(ml);
    ml.setLimits(TEST_LIMITS);
    clearGroupCache();
    logger = recordingLogger();
    confirmed = [];
  });
}

export function deps(client: Partial<MailerLiteClientOptions> = {}, extra: Partial<SyncDeps> = {}): SyncDeps {
  return {
    db,
    client: recordingMailerLiteClient(ml, confirmed, client),
    groups: GROUPS,
    clock: systemClock,
    logger,
    deadline: Date.now() + 540_000,
    mailboxes: testMailboxes(db),
    ...extra,
    // Runs follow one another at once here; the wait between syncs has its own tests.
    options: { minIntervalMs: 0, ...extra.options },
  };
}

export const sync = (extra: Partial<SyncDeps> = {}, client: Partial<MailerLiteClientOptions> = {}) =>
  handleSyncEmailsToMailerlite(null, deps(client, extra));

/**
 * 1,000 sign-ups of 700 people: 400 only in the hero form, 100 only in Join the Club, 200 in both,
 * and 100 who signed up twice in the hero form with their address in capitals the second time.
 * Without `repeats`: the 900 sign-ups of the same people, each (address, form) once.
 */
export function thousandSignups({ repeats = true } = {}): Signup[] {
  const signups: Signup[] = [];
  for (let i = 0; i < 700; i += 1) {
    if (i < 600) signups.push({ email: `kid${i}@example.com`, ...HERO });
    if (i >= 400) signups.push({ email: `kid${i}@example.com`, ...FINAL });
    if (i < 100 && repeats) signups.push({ email: `KID${i}@Example.COM`, ...HERO });
  }
  // A deterministic shuffle, so both forms and the repeats are spread through the log.
  const n = signups.length;
  return signups
    .map((signup, i) => ({ signup, key: (i * 7919) % n }))
    .sort((a, b) => a.key - b.key)
    .map((x) => x.signup);
}

/** Each (address, group) pair MailerLite confirmed, once: 600 in updates and 300 in the club. */
export function confirmedPairs(): number {
  return new Set(confirmed.flatMap(({ email, groups }) => groups.map((group) => `${group} ${email}`))).size;
}

export function expectedGroups(i: number): string[] {
  const names: string[] = [];
  if (i >= 400) names.push(GROUPS.club);
  if (i < 600) names.push(GROUPS.updates);
  return names;
}

/** Every one of the 700 is in MailerLite exactly once, in exactly the right groups. */
export function expectAllSevenHundredDelivered(): void {
  const groupName = new Map(ml.state.groups.map((group) => [group.id, group.name]));
  const subscribers = ml.state.subscribers;
  expect(subscribers).toHaveLength(700);
  const byEmail = new Map(subscribers.map((s) => [s.email, s]));
  for (let i = 0; i < 700; i += 1) {
    const subscriber = byEmail.get(`kid${i}@example.com`);
    expect(subscriber, `kid${i}`).toBeDefined();
    expect(subscriber?.groups.map((id) => groupName.get(id)).sort(), `kid${i}`).toEqual(expectedGroups(i));
    expect(subscriber?.fields.source).toMatch(/^(hero_form|final_cta)$/);
  }
}

/** Contacts MailerLite was sent (and answered 2xx for): upserts inside batches and single upserts. */
export function contactsSent(): number {
  return ml.state.requests.reduce((sum, request) => {
    if (request.path === '/api/batch' && request.status === 200) return sum + (request.batchSize ?? 0);
    if (request.path === '/api/subscribers' && request.method === 'POST' && request.status < 300)
      return sum + 1;
    return sum;
  }, 0);
}

export async function syncState(): Promise<SyncStateDoc | undefined> {
  return (await db.collection(SYNC_STATE_COLLECTION).doc(SYNC_STATE_DOC).get()).data() as
    | SyncStateDoc
    | undefined;
}

export const finished = () => logger.entries.find((entry) => entry.event === 'sync.finished')?.fields;

/** A new recording logger for the rest of the case (a second run's logs apart from the first's). */
export function freshLogger(): RecordingLogger {
  logger = recordingLogger();
  return logger;
}
