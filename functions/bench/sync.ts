// npm run bench:sync [-- --signups 10000 --window-ms 2000]
//
// N sign-ups in the Firebase Firestore emulator, synced to the MailerLite stand-in running MailerLite's
// documented limits (120 requests and 5 imports per window, batches of 50) with the one-minute
// window compressed. Prints the contacts delivered per window against the most those limits let
// through, and checks that every address arrived, in the right groups.

import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { deleteApp, initializeApp } from 'firebase-admin/app';
import { getFirestore } from 'firebase-admin/firestore';
import { loopbackOnlyEnv } from '../../stand-ins/loopback-env.ts';
import { type RequestLogEntry, startMailerLiteStandIn } from '../../stand-ins/mailerlite/index.ts';
import { startFirestoreEmulator } from '../../tests/support/firestore-emulator.ts';
import { handleSyncEmailsToMailerlite } from '../src/callables/sync-callable';
import { systemClock } from '../src/clock';
import type { SyncReply } from '../src/contract';
import type { Logger } from '../src/logs';
import { MailerLiteClient } from '../src/mailerlite/client';
import { Mailboxes } from '../src/privacy/mailboxes';

const { values } = parseArgs({
  options: {
    signups: { type: 'string', default: '10000' },
    'window-ms': { type: 'string', default: '2000' },
    'requests-per-window': { type: 'string', default: '120' },
    'imports-per-window': { type: 'string', default: '5' },
  },
});
const N = Number(values.signups);
const windowMs = Number(values['window-ms']);
const requestsPerWindow = Number(values['requests-per-window']);
const importsPerWindow = Number(values['imports-per-window']);
const BATCH = 50;
const TARGET = 0.9;

// The most upserts the limits let through in one window: every import slot carries a batch of 50,
// and every other request of the global budget one upsert.
const bound = importsPerWindow * BATCH + (requestsPerWindow - importsPerWindow);

/**
 * The sign-ups: one person in ten signs up in both forms, one in twenty twice in the same form with
 * the address in other case; the rest once. Returns them (shuffled) and who should be in which group.
 */
function makeSignups(n: number) {
  const signups: Array<{
    email: string;
    subscription_type: 'updates' | 'club';
    source: 'hero_form' | 'final_cta';
  }> = [];
  const expected = new Map<string, Set<'updates' | 'club'>>();
  for (let person = 0; signups.length < n; person += 1) {
    const email = `kid${person}@example.com`;
    const club = person % 3 === 0;
    const types = new Set<'updates' | 'club'>([club ? 'club' : 'updates']);
    signups.push(
      club
        ? { email, subscription_type: 'club', source: 'final_cta' }
        : { email, subscription_type: 'updates', source: 'hero_form' },
    );
    if (person % 10 === 0 && signups.length < n) {
      types.add(club ? 'updates' : 'club');
      signups.push(
        club
          ? { email, subscription_type: 'updates', source: 'hero_form' }
          : { email, subscription_type: 'club', source: 'final_cta' },
      );
    }
    if (person % 20 === 1 && signups.length < n) {
      const again = signups[signups.length - 1];
      if (again) signups.push({ ...again, email: email.toUpperCase() });
    }
    expected.set(email, types);
  }
  const shuffled = signups
    .map((signup, i) => ({ signup, key: (i * 7919) % signups.length }))
    .sort((a, b) => a.key - b.key)
    .map((x) => x.signup);
  return { signups: shuffled, expected };
}

/** Contacts MailerLite confirmed per rate-limit window, windows opened as the stand-in opens them. */
function perWindow(requests: RequestLogEntry[]) {
  const windows: Array<{ start: number; contacts: number }> = [];
  for (const request of requests) {
    if (!request.path.startsWith('/api/')) continue;
    const at = Date.parse(request.time);
    const current = windows.at(-1);
    // A window opens with the first request the limiter counts after the previous one expired.
    if ((!current || at >= current.start + windowMs) && request.status !== 429)
      windows.push({ start: at, contacts: 0 });
    const open = windows.at(-1);
    if (!open) continue;
    if (request.path === '/api/batch' && request.status === 200) open.contacts += request.batchSize ?? 0;
    if (request.path === '/api/subscribers' && request.method === 'POST' && request.status < 300)
      open.contacts += 1;
  }
  return windows;
}

async function main(): Promise<void> {
  const firestore = await startFirestoreEmulator();
  const ml = await startMailerLiteStandIn({
    quiet: true,
    customFields: ['source'],
    windowMs,
    requestsPerWindow,
    importsPerWindow,
    fractionalRetryAfter: true,
  });
  process.env.FIRESTORE_EMULATOR_HOST = firestore.hostPort;
  // Loopback only: firebase-admin would otherwise ask the GCE metadata server whether it runs on Google Cloud.
  Object.assign(process.env, loopbackOnlyEnv);
  const app = initializeApp({ projectId: 'demo-goody' }, `bench-${randomUUID()}`);
  const db = getFirestore(app);
  try {
    const { signups, expected } = makeSignups(N);
    process.stdout.write(
      `Seeding ${N.toLocaleString('en-US')} sign-ups of ${expected.size.toLocaleString('en-US')} people ... `,
    );
    const start = Date.now();
    for (let offset = 0; offset < signups.length; offset += 500) {
      const batch = db.batch();
      signups.slice(offset, offset + 500).forEach((signup, i) => {
        batch.create(db.collection('email_subscriptions').doc(), {
          ...signup,
          created_at: new Date(start + offset + i),
        });
      });
      await batch.commit();
    }
    console.log(`done in ${((Date.now() - start) / 1000).toFixed(1)} s`);
    console.log(
      `MailerLite stand-in: ${requestsPerWindow} requests and ${importsPerWindow} imports per ${windowMs} ms window, batches of ${BATCH}`,
    );

    const silent: Logger = { info() {}, warn() {}, error() {} };
    const client = new MailerLiteClient({ apiKey: ml.apiKey, baseUrl: ml.baseUrl });
    const replies: SyncReply[] = [];
    const syncStart = Date.now();
    // As an operator would: press Sync again while the reply says sign-ups remain.
    for (;;) {
      const reply = await handleSyncEmailsToMailerlite(null, {
        db,
        client,
        groups: { updates: 'GOODY launch updates', club: 'GOODY Club' },
        clock: systemClock,
        logger: silent,
        deadline: Date.now() + 540_000,
        mailboxes: new Mailboxes(db, {
          mailbox: 'bench-mailbox-key-secret',
          unsubscribe: 'bench-unsubscribe-secret',
        }),
      });
      replies.push(reply);
      if (!reply.success) throw new Error(`sync failed: ${reply.error}`);
      if (reply.remaining === 0) break;
    }
    const elapsedMs = Date.now() - syncStart;

    // Nothing lost: every person in MailerLite once, in exactly their groups.
    const state = ml.state;
    const groupType = new Map(state.groups.map((g) => [g.id, g.name === 'GOODY Club' ? 'club' : 'updates']));
    const byEmail = new Map(state.subscribers.map((s) => [s.email, s]));
    let lost = 0;
    for (const [email, types] of expected) {
      const subscriber = byEmail.get(email);
      const got = new Set(subscriber?.groups.map((id) => groupType.get(id)) ?? []);
      if (!subscriber || got.size !== types.size || [...types].some((t) => !got.has(t))) lost += 1;
    }

    const windows = perWindow(state.requests);
    const delivered = windows.reduce((sum, w) => sum + w.contacts, 0);
    // The last window is cut short by running out of work: the steady state is in the others.
    const full = windows.slice(0, -1);
    const fullContacts = full.reduce((sum, w) => sum + w.contacts, 0);
    const last = windows.at(-1);
    const span = last && windows[0] ? last.start - windows[0].start : 0;
    const perFullWindow = full.length > 0 ? fullContacts / full.length : delivered;
    const perWallWindow = span > 0 ? (fullContacts * windowMs) / span : delivered;
    const refused = state.requests.filter((r) => r.status === 429).length;

    const pct = (x: number) => `${((x / bound) * 100).toFixed(1)}%`;
    console.log('');
    console.log(
      `synced:                    ${replies.map((r) => r.synced).join(' + ')} people in ${replies.length} run(s), ${(elapsedMs / 1000).toFixed(1)} s`,
    );
    console.log(
      `contacts delivered:        ${delivered.toLocaleString('en-US')} upserts over ${windows.length} windows (${state.requests.length.toLocaleString('en-US')} requests, ${refused} answered 429)`,
    );
    console.log(
      `theoretical maximum:       ${bound} contacts per window (${importsPerWindow} x ${BATCH} in batches + ${requestsPerWindow - importsPerWindow} single upserts)`,
    );
    console.log(
      `delivered per window:      ${perFullWindow.toFixed(1)} (${pct(perFullWindow)} of the maximum, mean over ${full.length} full windows)`,
    );
    console.log(
      `delivered per window time: ${perWallWindow.toFixed(1)} (${pct(perWallWindow)} of the maximum, counting the waits between windows)`,
    );
    console.log(
      `nothing lost:              ${lost === 0 ? 'yes' : `NO, ${lost} people missing or in the wrong groups`} (${byEmail.size.toLocaleString('en-US')} subscribers, ${expected.size.toLocaleString('en-US')} expected)`,
    );
    const ok = perWallWindow / bound >= TARGET;
    console.log(`target >= ${TARGET * 100}% of the maximum: ${ok ? 'met' : 'NOT met'}`);
    if (lost > 0 || byEmail.size !== expected.size) process.exitCode = 1;
  } finally {
    await deleteApp(app);
    await Promise.all([firestore.stop(), ml.stop()]);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
