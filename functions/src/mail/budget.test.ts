// The mail budget against the Firestore emulator: a slot is booked in the first hour with room, never more than
// perHour in one hour (nor more than a domain's share), whether the bookings come one by one or all at once, and
// a full hour costs a booking one read.
import { describe, expect, it } from 'vitest';
import { testBed } from '../../test-support/bed';
import { recordingLogger } from '../../test-support/logs';
import { countReads } from '../../test-support/reads';
import { bookMailSlot, DOMAIN_SHARE_MIN, MAIL_BUDGETS, SHARDS } from './budget';

const bed = testBed();
const { db } = bed;

const HOUR = 60 * 60_000;
const NOW = Date.UTC(2026, 10, 25, 13, 10);
const THIS_HOUR = Math.floor(NOW / HOUR);

async function book(
  perHour: number,
  options: { now?: number; domain?: string | null; random?: () => number } = {},
) {
  const logger = recordingLogger();
  const hour = await bookMailSlot(db, {
    now: options.now ?? NOW,
    perHour,
    domain: options.domain ?? null,
    logger,
    random: options.random,
  });
  return { hour: hour - THIS_HOUR, events: logger.events() };
}

/** The slots counted in each hour (as hours from now), from the shards' counts. */
async function countedByHour(): Promise<Map<number, number>> {
  const counted = new Map<number, number>();
  for (const doc of (await db.collection(MAIL_BUDGETS).get()).docs) {
    const match = /^(\d+)-(\d+)$/.exec(doc.id);
    if (!match) continue;
    const hour = Number(match[1]) - THIS_HOUR;
    counted.set(hour, (counted.get(hour) ?? 0) + Number(doc.get('sent') ?? 0));
  }
  return counted;
}

describe('the mail budget', () => {
  it('books perHour slots in this hour, then in the next ones in order, and says once per hour that it is full', async () => {
    const hours = [];
    const events = [];
    for (let i = 0; i < 20; i += 1) {
      const booked = await book(8, { random: () => ((i * 7) % 45) / 45 });
      hours.push(booked.hour);
      events.push(...booked.events);
    }
    expect(hours).toEqual([
      ...Array<number>(8).fill(0),
      ...Array<number>(8).fill(1),
      ...Array<number>(4).fill(2),
    ]);
    expect(events).toEqual(['thank_you.budget_reached', 'thank_you.budget_reached']);
    expect(await countedByHour()).toEqual(
      new Map([
        [0, 8],
        [1, 8],
        [2, 4],
      ]),
    );
  });

  it('a booking made in a later hour counts in that hour: a slot of an hour gone is never used again', async () => {
    for (let i = 0; i < 3; i += 1) expect((await book(3)).hour).toBe(0);
    // Three hours later (a relay down meanwhile), the hour is the one it is in, with its whole budget.
    for (let i = 0; i < 3; i += 1) expect((await book(3, { now: NOW + 3 * HOUR })).hour).toBe(3);
    expect((await book(3, { now: NOW + 3 * HOUR })).hour).toBe(4);
  });

  it('books no more than perHour in one hour when many ask at once, and none of them fails', async () => {
    const booked = await Promise.all(Array.from({ length: 30 }, () => book(5)));
    const perHour = new Map<number, number>();
    for (const { hour } of booked) perHour.set(hour, (perHour.get(hour) ?? 0) + 1);
    for (const count of perHour.values()) expect(count).toBeLessThanOrEqual(5);
    expect(perHour.get(0)).toBeGreaterThan(0);
    // Every booking left its increment in a shard with room, or read a full one and wrote nothing, or took
    // back the increment that put a shard past its share: the counts are the bookings.
    expect(await countedByHour()).toEqual(perHour);
  });

  it('gives a catch-all domain at most its share of an hour; the rest of the hour stays for everyone else', async () => {
    const perHour = 100;
    const burst = [];
    for (let i = 0; i < DOMAIN_SHARE_MIN * 2 + 1; i += 1)
      burst.push((await book(perHour, { domain: 'bot' })).hour);
    expect(burst).toEqual([
      ...Array<number>(DOMAIN_SHARE_MIN).fill(0),
      ...Array<number>(DOMAIN_SHARE_MIN).fill(1),
      2,
    ]);
    // A person of a shared provider, or of another domain, who signs up after the burst: this hour.
    expect((await book(perHour)).hour).toBe(0);
    expect((await book(perHour, { domain: 'school' })).hour).toBe(0);
  });

  it('a domain whose share is left in an hour the whole budget filled takes no slot there: its count goes back', async () => {
    for (let i = 0; i < 4; i += 1) await book(4);
    expect((await book(4, { domain: 'school' })).hour).toBe(1);
    const domainCounts = (await db.collection(MAIL_BUDGETS).get()).docs
      .filter((doc) => doc.id.includes('-domain-'))
      .map((doc) => [Number(doc.id.split('-')[0]) - THIS_HOUR, doc.get('sent')]);
    expect(domainCounts.sort()).toEqual([
      [0, 0],
      [1, 1],
    ]);
  });

  it('passes a full hour with one read, however many booked it', async () => {
    for (let i = 0; i < 3; i += 1) await book(3, { random: () => i / SHARDS });
    // The fourth finds every shard full and marks the hour.
    expect((await book(3, { random: () => 0 })).hour).toBe(1);
    const counter = countReads(db);
    let hour: number;
    try {
      hour = (await book(3, { random: () => 0 })).hour;
    } finally {
      counter.stop();
    }
    expect(hour).toBe(1);
    // Hour 0's marker; hour 1's marker (none yet), then shard 0, full (a read), and shard 1 (a read, the
    // increment, the read back).
    expect(counter.reads).toBe(1 + 1 + 1 + 2);
  });
});
