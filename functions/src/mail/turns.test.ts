// The mail budget's lines against the Firestore emulator: released oldest first, each hour up to the budget with
// a domain's share kept, and a run's work bounded by the budget, however many wait.
import type { Firestore } from 'firebase-admin/firestore';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FirestoreHarness, startFirestore } from '../../test-support/firestore';
import { recordingLogger } from '../../test-support/logs';
import { countReads } from '../../test-support/reads';
import { DOMAIN_SHARE_MIN } from './budget';
import {
  joinLine,
  lineOf,
  MAIL_LINES,
  placeInLine,
  type ReleaseDeps,
  releaseTurns,
  SHARED_LINE,
  WAITING,
} from './turns';

let firestore: FirestoreHarness;
let db: Firestore;

beforeAll(async () => {
  firestore = await startFirestore();
  db = firestore.db;
});
afterAll(() => firestore.stop());
beforeEach(() => firestore.reset());

const HOUR = 60 * 60_000;
const NOW = Date.UTC(2026, 10, 25, 13, 10);
const CATCH_ALL = 'a-catch-all-domains-key';

/** Joins `count` waiters to `line`, one a second from `from`, named `<prefix>-<n>` (n zero-padded). */
async function waiters(line: string, prefix: string, count: number, from: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(6, '0')}`);
  const writer = db.bulkWriter();
  for (const [i, id] of ids.entries()) {
    void writer.create(db.collection(MAIL_LINES).doc(line).collection(WAITING).doc(id), {
      queued_at: new Date(from + i * 1_000),
    });
  }
  await writer.close();
  await db
    .collection(MAIL_LINES)
    .doc(line)
    .set({ head_at: new Date(from) });
  return ids;
}

function release(perHour: number, extra: Partial<ReleaseDeps> = {}) {
  const released: Array<{ signup: string; hour: number }> = [];
  const looked: string[] = [];
  const deps: ReleaseDeps = {
    db,
    now: NOW,
    perHour,
    logger: recordingLogger(),
    stillWaiting: async (signup) => {
      looked.push(signup);
      return true;
    },
    release: async (signup, hour) => {
      released.push({ signup, hour });
    },
    ...extra,
  };
  return { released, looked, run: () => releaseTurns(deps) };
}

const entriesOf = async (line: string) =>
  (await db.collection(MAIL_LINES).doc(line).collection(WAITING).orderBy('queued_at').get()).docs.map(
    (doc) => doc.id,
  );

describe('the mail budget as a turn (mail/turns.ts)', () => {
  it("releases oldest first, up to the hour's budget, a catch-all domain's line only up to its share", async () => {
    // The catch-all domain's burst came first; the shared providers' people after it.
    const bots = await waiters(CATCH_ALL, 'bot', 100, NOW - HOUR);
    const people = await waiters(SHARED_LINE, 'kid', 40, NOW - HOUR / 2);
    const { released, run } = release(30);
    const report = await run();
    // The domain's share (10 of 30), then the rest of the hour for the shared line, each oldest first.
    expect(released.map((r) => r.signup)).toEqual([
      ...bots.slice(0, DOMAIN_SHARE_MIN),
      ...people.slice(0, 30 - DOMAIN_SHARE_MIN),
    ]);
    expect(new Set(released.map((r) => r.hour))).toEqual(new Set([Math.floor(NOW / HOUR)]));
    expect(report).toMatchObject({ released: 30, dropped: 0, stopped: 'budget' });
    // The released leave their lines; the rest keep their places, the lines' heads moved to their oldest.
    expect(await entriesOf(CATCH_ALL)).toEqual(bots.slice(DOMAIN_SHARE_MIN));
    expect(await entriesOf(SHARED_LINE)).toEqual(people.slice(30 - DOMAIN_SHARE_MIN));
    const head = (await db.collection(MAIL_LINES).doc(SHARED_LINE).get()).get('head_at').toMillis();
    expect(head).toBe(NOW - HOUR / 2 + (30 - DOMAIN_SHARE_MIN) * 1_000);
    // The hour is spent: a second run releases nothing.
    const again = release(30);
    expect(await again.run()).toMatchObject({ released: 0, stopped: 'budget' });
    // The next hour goes on where the last one stopped.
    const nextHour = release(30, { now: NOW + HOUR });
    await nextHour.run();
    expect(nextHour.released[0]?.signup).toBe(bots[DOMAIN_SHARE_MIN]);
  });

  it('does work bounded by the budget, not by the backlog: a run over 2,000 waiters reads about what it releases', async () => {
    await waiters(SHARED_LINE, 'kid', 2_000, NOW - HOUR);
    const { released, looked, run } = release(10);
    const reads = countReads(db);
    try {
      await run();
    } finally {
      reads.stop();
    }
    expect(released).toHaveLength(10);
    // One page of entries (20) looked at, not 2,000. Reads: the lines, the page (20), the line's head, and the
    // budget's shards, which cost more as the hour fills (a slot reads the full shards it passes: at most about
    // 12 a slot here, the 10 slots' shards of 1): far under 2,000 however the shards fall.
    expect(looked.length).toBeLessThanOrEqual(20);
    expect(reads.reads).toBeLessThan(200);
  });

  it('takes out of the line, spending no slot, a thank-you whose row is gone or whose part is settled', async () => {
    const ids = await waiters(SHARED_LINE, 'kid', 5, NOW - HOUR);
    const gone = new Set([ids[0], ids[2]]);
    const { released, run } = release(2, { stillWaiting: async (signup) => !gone.has(signup) });
    const report = await run();
    expect(released.map((r) => r.signup)).toEqual([ids[1], ids[3]]);
    expect(report).toMatchObject({ released: 2, dropped: 2 });
    expect(await entriesOf(SHARED_LINE)).toEqual([ids[4]]);
  });

  it('keeps the place of a thank-you whose release failed (Cloud Tasks down), and says so by failing', async () => {
    const ids = await waiters(SHARED_LINE, 'kid', 3, NOW - HOUR);
    const { run } = release(3, {
      release: async (signup) => {
        if (signup === ids[1]) throw new Error('UNAVAILABLE');
      },
    });
    await expect(run()).rejects.toThrow('UNAVAILABLE');
    expect(await entriesOf(SHARED_LINE)).toEqual([ids[1]]);
  });

  it("lists a line while it has waiters: an emptied line's document goes, one joined again comes back", async () => {
    const [only] = await waiters(CATCH_ALL, 'bot', 1, NOW - HOUR);
    await release(10).run();
    expect((await db.collection(MAIL_LINES).get()).docs.map((doc) => doc.id)).toEqual([]);
    await joinLine(db, CATCH_ALL, 'later', NOW);
    expect((await db.collection(MAIL_LINES).doc(CATCH_ALL).get()).get('head_at').toMillis()).toBe(NOW);
    // A second join keeps the first place.
    await joinLine(db, CATCH_ALL, 'later', NOW + 5_000);
    expect(
      (await db.collection(MAIL_LINES).doc(CATCH_ALL).collection(WAITING).doc('later').get())
        .get('queued_at')
        .toMillis(),
    ).toBe(NOW);
    expect(only).toBeDefined();
  });

  it('tells a thank-you its place: nobody waiting, the oldest, or behind someone', async () => {
    expect(await placeInLine(db, lineOf(null), 'kid-a')).toBe('empty');
    await joinLine(db, lineOf(null), 'kid-a', NOW);
    await joinLine(db, lineOf(null), 'kid-b', NOW + 1);
    expect(await placeInLine(db, SHARED_LINE, 'kid-a')).toBe('first');
    expect(await placeInLine(db, SHARED_LINE, 'kid-b')).toBe('behind');
    expect(await placeInLine(db, lineOf(CATCH_ALL), 'kid-a')).toBe('empty');
  });
});
