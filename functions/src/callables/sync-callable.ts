import '../global-options';
import type {
  DocumentReference,
  DocumentSnapshot,
  Firestore,
  Query,
  Timestamp,
} from 'firebase-admin/firestore';
import { HttpsError, onCall } from 'firebase-functions/v2/https';
import { withAppCheck } from '../app-check';
import { type Clock, systemClock } from '../clock';
import { CALLABLES, SIGNUPS, type SyncReply } from '../contract';
import { type IndexOutcome, indexSignup } from '../delivery/index-signup';
import {
  DELIVERY,
  type EnqueuePart,
  enqueuePart,
  lifeOf,
  type PartRecord,
  partOf,
  redrive,
  storedAddress,
  syncRound,
} from '../delivery/part-life';
import { cloudTasksEnqueue } from '../delivery/queue';
import { adminFirestore, millisOf } from '../firestore';
import { claimLease, type Lease, type LeaseLayout } from '../lease';
import { cloudLogger, type Logger } from '../logs';
import { DEFAULTS, intParam, MAILBOX_KEY_SECRET, SYNC_MIN_INTERVAL_SECONDS } from '../params';
import { parseSyncInput, validated } from '../schemas';

export const SYNC_TIMEOUT_SECONDS = 540;
/** The run stops starting work this long before the timeout, to write its cursor and answer. */
const SYNC_STOP_MARGIN_MS = 15_000;
/** How long the lease lasts unrenewed: a crashed run holds the next one back at most this long. */
const LEASE_MS = 3 * 60_000;
/** The most contacts on their way a run waits for: with more (a rush in the queue), it answers at once. */
const WATCH_MAX = 100;

/** `_sync/mailerlite`: the Sync's lease and cursor, in one document. Server-only (the rules deny clients). */
export const SYNC_STATE = { collection: '_sync', id: 'mailerlite' } as const;

interface Cursor {
  created_at: Timestamp;
  id: string;
}

type Outcome = 'done' | 'deadline' | 'failed';

const DEFAULT_SYNC_OPTIONS = {
  /** Sign-ups read per query; the cursor moves past a page once each of its rows is handed over. */
  pageSize: 300,
  concurrency: 10,
  /** How long after a run ended the next may start, unless that run stopped at its deadline. */
  minIntervalMs: 60_000,
  /** How long a run waits for the contacts on their way before it answers. */
  settleMs: 45_000,
  pollMs: 1_000,
};
type SyncOptions = typeof DEFAULT_SYNC_OPTIONS;

export interface SyncDeps {
  db: Firestore;
  clock: Clock;
  logger: Logger;
  enqueuePart: EnqueuePart;
  index: (ref: DocumentReference) => Promise<IndexOutcome>;
  deadline: number;
  options?: Partial<SyncOptions>;
}

/**
 * The operator's Sync: hands each stored sign-up's contact part, oldest first, what its life says (syncRound)
 * on the rows' own engine, and the trigger's work to a row it never reached; then waits a little for them and
 * answers with what the rows say. It never calls MailerLite itself. One run at a time, one a minute at most
 * (/admin is public); a run cut by the deadline leaves a cursor the next continues from.
 */
export async function handleSyncEmailsToMailerlite(data: unknown, deps: SyncDeps): Promise<SyncReply> {
  validated(CALLABLES.syncEmails, deps.logger, parseSyncInput, data);
  const options = { ...DEFAULT_SYNC_OPTIONS, ...deps.options };
  const stopAt = deps.deadline - SYNC_STOP_MARGIN_MS;
  const start = await startRun(deps, options);
  if ('success' in start) return start;

  const { lease } = start;
  let { cursor } = start;
  const tally = new Tally();
  let outcome: Outcome = 'done';
  try {
    for (;;) {
      if (deps.clock.now() >= stopAt) {
        outcome = 'deadline';
        break;
      }
      const page = (await after(deps.db, cursor).limit(options.pageSize).get()).docs;
      for (let at = 0; at < page.length; at += options.concurrency) {
        await Promise.all(page.slice(at, at + options.concurrency).map((row) => handOver(row, deps, tally)));
      }
      const last = page.at(-1);
      if (last) {
        cursor = { created_at: last.get('created_at'), id: last.id };
        await lease.renew({ cursor });
      }
      if (page.length < options.pageSize) break;
    }
    await tally.settle(deps, lease, Math.min(stopAt, deps.clock.now() + options.settleMs), options.pollMs);
  } catch (error) {
    // The cursor stays at the last finished page: the next run hands the rest again (a round more, no more).
    outcome = 'failed';
    deps.logger.error('sync.failed', { reason: (error as Error).name ?? 'unknown' });
  }

  const remaining =
    outcome === 'done'
      ? 0
      : await after(deps.db, cursor)
          .count()
          .get()
          .then((count) => count.data().count)
          .catch(() => null);
  await lease
    .release({
      cursor: outcome === 'done' ? null : cursor,
      last_run: { outcome, finished_at: new Date(deps.clock.now()) },
    })
    .catch(() => undefined); // lost: the run that took it over writes its own
  const counts = tally.counts();
  deps.logger.info('sync.finished', { outcome, ...counts, remaining: remaining ?? undefined });
  return replyOf(outcome, start.cursor !== null, counts, remaining);
}

const LEASE: LeaseLayout = {
  expiresAt: (data) => (data.lease ? millisOf(data.lease.expires_at) : null),
  fields: (owner, expiresAt) => ({ lease: expiresAt ? { owner, expires_at: expiresAt } : null }),
};

/**
 * Claims the lease and reads the cursor; the refusal to answer while another run holds it, or within
 * `minIntervalMs` of the last run unless that one stopped at its deadline.
 */
async function startRun(
  deps: SyncDeps,
  options: SyncOptions,
): Promise<{ lease: Lease; cursor: Cursor | null } | SyncReply> {
  const { clock, logger } = deps;
  const claim = await claimLease<number>(
    deps.db.collection(SYNC_STATE.collection).doc(SYNC_STATE.id),
    { owner: crypto.randomUUID(), clock, leaseMs: LEASE_MS, layout: LEASE },
    (previous, now) => {
      const last = previous?.last_run;
      const endedAt = last?.finished_at ? millisOf(last.finished_at) : null;
      if (endedAt !== null && last.outcome !== 'deadline' && now < endedAt + options.minIntervalMs)
        return { refuse: endedAt + options.minIntervalMs };
      return { write: { updated_at: new Date(now) } };
    },
  ).catch(() => {
    throw new HttpsError('unavailable', 'The database is unavailable right now. Please try again later.');
  });
  if (claim.status === 'held') {
    logger.info('sync.refused_running', { lease_expires_in_ms: claim.expiresAt - clock.now() });
    return refusal('A sync is already running. Try again when it has finished.');
  }
  if (claim.status === 'refused') {
    const waitMs = claim.reason - clock.now();
    logger.info('sync.refused_too_soon', { wait_ms: waitMs });
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    return refusal(
      `A sync finished moments ago. Try again in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`,
    );
  }
  if (claim.tookOverExpired) logger.warn('sync.lease_taken_over');
  const cursor = (claim.previous?.cursor as Cursor | null | undefined) ?? null;
  logger.info('sync.started', { resumed: cursor !== null });
  return { lease: claim.lease, cursor };
}

/** The sign-ups after the cursor, oldest first (`__name__`: the document id, for ties). */
function after(db: Firestore, cursor: Cursor | null): Query {
  const query = db.collection(SIGNUPS).orderBy('created_at').orderBy('__name__');
  return cursor ? query.startAfter(cursor.created_at, cursor.id) : query;
}

async function handOver(row: DocumentSnapshot, deps: SyncDeps, tally: Tally): Promise<void> {
  const part = partOf(row.data(), 'contact');
  if (part === null) {
    // A bot's junk costs its read, not a transaction; so does a `delivery` the life cannot read.
    if (!isSignup(row) || row.get(DELIVERY) !== undefined) {
      tally.totals.skipped += 1;
      return;
    }
    // The trigger never reached it (or has not yet): its work, which is idempotent, now.
    const indexed = await deps.index(row.ref);
    if (indexed === 'delivery_enqueued') tally.watch(row.ref, 0);
    else if (indexed === 'not_an_address') tally.totals.skipped += 1;
    return;
  }
  const now = deps.clock.now();
  const round = syncRound(part, now);
  if (round !== null) {
    await redrive(deps.enqueuePart, 'contact', row, round, now);
  }
  if (part.state === 'pending') tally.watch(row.ref, part.attempts, part);
  else tally.count(part);
}

function isSignup(row: DocumentSnapshot): boolean {
  try {
    storedAddress(row);
    return true;
  } catch {
    return false;
  }
}

interface Counts {
  /** In MailerLite, or unsubscribed (counted together, so the reply tells no one's history). */
  synced: number;
  /** Pending: their task is on its way, or Cloud Tasks retries it. */
  onTheirWay: number;
  /** Waiting for our setup: MailerLite refused the key, a group or a field. */
  setup: number;
  rejected: number;
  skipped: number;
}

/** Where the contacts a run read stand: each settled one counted as read, each pending one once watched. */
class Tally {
  readonly totals: Counts = { synced: 0, onTheirWay: 0, setup: 0, rejected: 0, skipped: 0 };
  /** Pending parts by row id, with their attempts when handed over and the part as last read (absent: not read). */
  private readonly watched = new Map<
    string,
    { ref: DocumentReference; attempts: number; part?: PartRecord | 'gone' }
  >();

  count(part: PartRecord): void {
    const life = lifeOf(part);
    if (life.state === 'done') this.totals.synced += 1;
    else if (life.state === 'skipped') {
      // Unsubscribed counts with those in MailerLite: apart, a stranger could learn an owner had left.
      if (life.reason === 'refused') this.totals.rejected += 1;
      else if (life.reason === 'not_an_address') this.totals.skipped += 1;
      else this.totals.synced += 1;
    } else if (life.state === 'waiting' && life.reason === 'configuration') this.totals.setup += 1;
    else this.totals.onTheirWay += 1;
  }

  /** A pending part and its attempts when handed over: a later attempt is the outcome of the round handed. */
  watch(ref: DocumentReference, attempts: number, part?: PartRecord): void {
    this.watched.set(ref.id, { ref, attempts, ...(part ? { part } : {}) });
  }

  /** Polls the watched rows until each settled or failed an attempt, or `until`; over WATCH_MAX: none. */
  async settle(deps: SyncDeps, lease: Lease, until: number, pollMs: number): Promise<void> {
    if (this.watched.size > WATCH_MAX) return;
    let open = [...this.watched.values()];
    while (open.length > 0 && deps.clock.now() + pollMs <= until) {
      await deps.clock.sleep(pollMs);
      for (const row of await deps.db.getAll(...open.map((entry) => entry.ref))) {
        const entry = this.watched.get(row.id);
        if (entry) entry.part = (row.exists ? partOf(row.data(), 'contact') : null) ?? 'gone';
      }
      open = open.filter(
        ({ part, attempts }) => part !== 'gone' && part?.state === 'pending' && part.attempts <= attempts,
      );
      if (deps.clock.now() - lease.renewedAt > LEASE_MS / 3) await lease.renew();
    }
  }

  /** The counts, once the watched rows are read for the last time: a row erased meanwhile is not counted. */
  counts(): Counts {
    for (const { part } of this.watched.values()) {
      if (part === undefined) this.totals.onTheirWay += 1;
      else if (part !== 'gone') this.count(part);
    }
    this.watched.clear();
    return { ...this.totals };
  }
}

const count = (n: number) => new Intl.NumberFormat('en-US').format(n);
const plural = (n: number, one: string, many: string) => `${count(n)} ${n === 1 ? one : many}`;

/** The reply, in words and numbers; /admin is public, so it names no param, group or MailerLite message. */
function replyOf(outcome: Outcome, resumed: boolean, counts: Counts, remaining: number | null): SyncReply {
  const { synced, onTheirWay, setup, rejected, skipped } = counts;
  const where = [
    `${resumed ? 'Continuing the last sync: ' : ''}${plural(synced, 'sign-up is', 'sign-ups are')} in MailerLite or unsubscribed`,
    onTheirWay > 0
      ? `; ${count(onTheirWay)} more ${onTheirWay === 1 ? 'is on its' : 'are on their'} way.`
      : '.',
  ].join('');
  const notes = [
    rejected > 0
      ? `MailerLite refused ${plural(rejected, 'stored address', 'stored addresses')} as invalid.`
      : '',
    skipped > 0
      ? `${plural(skipped, 'stored document was', 'stored documents were')} not a sign-up and ${skipped === 1 ? 'was' : 'were'} skipped.`
      : '',
    remaining === 0
      ? ''
      : remaining === null
        ? 'Some sign-ups remain: run the sync again to continue.'
        : `${plural(remaining, 'sign-up remains', 'sign-ups remain')}: run the sync again to continue.`,
  ].filter(Boolean);
  const failure =
    outcome === 'failed'
      ? ['The database or the task queue is unavailable right now.']
      : setup > 0
        ? [
            `MailerLite refused the server's setup (its API key, a group or a field): ${plural(setup, 'sign-up waits', 'sign-ups wait')} until it is fixed.`,
            "The functions' logs (add_contact.failed) say what to fix.",
          ]
        : [];
  const message = [...failure, where, ...notes].join(' ');
  const success = failure.length === 0;
  return { success, message, error: success ? null : message, synced, remaining, rejected, skipped };
}

function refusal(message: string): SyncReply {
  return { success: false, message, error: message, synced: 0, remaining: null, rejected: 0, skipped: 0 };
}

export const syncEmailsToMailerlite = onCall(
  // One instance (one run at a time), for the longest timeout an HTTPS function has.
  { secrets: [MAILBOX_KEY_SECRET], timeoutSeconds: SYNC_TIMEOUT_SECONDS, maxInstances: 1 },
  withAppCheck(CALLABLES.syncEmails, async (request) => {
    const deadline = Date.now() + SYNC_TIMEOUT_SECONDS * 1000;
    const db = await adminFirestore();
    const enqueue = enqueuePart(cloudTasksEnqueue, MAILBOX_KEY_SECRET.value());
    const base = { enqueuePart: enqueue, clock: systemClock, logger: cloudLogger };
    return handleSyncEmailsToMailerlite(request.data, {
      ...base,
      db,
      index: (ref) => indexSignup(ref, { ...base, mailboxSecret: MAILBOX_KEY_SECRET.value() }),
      deadline,
      options: {
        minIntervalMs: intParam(SYNC_MIN_INTERVAL_SECONDS, DEFAULTS.SYNC_MIN_INTERVAL_SECONDS) * 1000,
      },
    });
  }),
);
