// The mail budget against the Firestore emulator: never more than perHour slots an hour, whether the senders
// come one by one or all at once, and an hour already spent costs a held-back task two reads.
import type { Firestore } from 'firebase-admin/firestore';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FirestoreHarness, startFirestore } from '../../test-support/firestore';
import { recordingLogger } from '../../test-support/logs';
import { countReads } from '../../test-support/reads';
import { MAIL_BUDGETS, SHARDS, takeMailSlot } from './budget';

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

async function take(perHour: number, options: { now?: number; random?: () => number } = {}) {
  const logger = recordingLogger();
  const slot = await takeMailSlot(db, { now: options.now ?? NOW, perHour, logger, random: options.random });
  return { granted: slot.granted, events: logger.events() };
}

async function sentThisHour(): Promise<number> {
  const hour = Math.floor(NOW / HOUR);
  const shards = await db.collection(MAIL_BUDGETS).get();
  return shards.docs
    .filter((doc) => doc.id.startsWith(`${hour}-`) && doc.id !== `${hour}-reached`)
    .reduce((sum, doc) => sum + Number(doc.get('sent') ?? 0), 0);
}

describe('the mail budget', () => {
  it('grants exactly perHour slots to senders one by one, then refuses and says so once', async () => {
    const outcomes = [];
    for (let i = 0; i < 45; i += 1) outcomes.push(await take(40, { random: () => ((i * 7) % 45) / 45 }));
    expect(outcomes.filter((outcome) => outcome.granted)).toHaveLength(40);
    expect(outcomes.slice(40).every((outcome) => !outcome.granted)).toBe(true);
    expect(outcomes.flatMap((outcome) => outcome.events)).toEqual(['thank_you.budget_reached']);
    // The next hour starts with the whole budget.
    expect((await take(40, { now: NOW + HOUR })).granted).toBe(true);
  });

  it('grants no more than perHour when many senders ask at once, and none of them fails', async () => {
    const outcomes = await Promise.all(Array.from({ length: 60 }, () => take(10)));
    const granted = outcomes.filter((outcome) => outcome.granted).length;
    expect(granted).toBeGreaterThan(0);
    expect(granted).toBeLessThanOrEqual(10);
    // Every sender left its increment in a shard with room, or read a full one and wrote nothing, or took
    // back the increment that put a shard past its share: the count is the slots granted.
    expect(await sentThisHour()).toBe(granted);
  });

  it('costs a task held back by a spent hour two reads and no write', async () => {
    for (let i = 0; i < 3; i += 1) await take(3, { random: () => i / SHARDS });
    expect((await take(3)).granted).toBe(false);
    const sent = await sentThisHour();
    const counter = countReads(db);
    try {
      expect((await take(3, { random: () => 0.99 })).granted).toBe(false);
    } finally {
      counter.stop();
    }
    expect(counter.reads).toBe(2);
    expect(await sentThisHour()).toBe(sent);
  });
});
