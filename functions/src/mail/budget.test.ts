// The mail budget against the Firestore emulator: a slot is booked in the first hour with room, never more than
// perHour in one hour (nor more than a domain's share), whether the bookings come one by one or all at once
// (then the hour is filled, not passed), and a full hour costs a booking one read.
import { describe, expect, it } from 'vitest';
import { testBed } from '../../test-support/bed';
import { type DocumentCall, faultyFirestore } from '../../test-support/faulty-firestore';
import { recordingLogger } from '../../test-support/logs';
import { bookMailSlot, DOMAIN_SHARE_MIN, MAIL_BUDGETS } from './budget';

const bed = testBed();
const { db } = bed;

const HOUR = 60 * 60_000;
const NOW = Date.UTC(2026, 10, 25, 13, 10);
const THIS_HOUR = Math.floor(NOW / HOUR);

async function book(
  perHour: number,
  options: { now?: number; domain?: string | null; calls?: DocumentCall[] } = {},
) {
  const logger = recordingLogger();
  const { calls } = options;
  const booker = calls ? faultyFirestore(db, (call) => void calls.push(call)) : db;
  const hour = await bookMailSlot(booker, {
    now: options.now ?? NOW,
    perHour,
    domain: options.domain ?? null,
    logger,
  });
  return { hour: hour - THIS_HOUR, events: logger.events() };
}

/** The whole budget's slots taken in each hour (as hours from now), from the slots' documents. */
async function countedByHour(): Promise<Map<number, number>> {
  const counted = new Map<number, number>();
  for (const doc of (await db.collection(MAIL_BUDGETS).get()).docs) {
    const match = /^(\d+)-(\d+)$/.exec(doc.id);
    if (!match) continue;
    const hour = Number(match[1]) - THIS_HOUR;
    counted.set(hour, (counted.get(hour) ?? 0) + 1);
  }
  return counted;
}

describe('the mail budget', () => {
  it('books perHour slots in this hour, then in the next ones in order, and says once per hour that it is full', async () => {
    const hours = [];
    const events = [];
    for (let i = 0; i < 20; i += 1) {
      const booked = await book(8);
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

  it('books no more than perHour in one hour when many ask at once, fills this hour, and none of them fails', async () => {
    const booked = await Promise.all(Array.from({ length: 30 }, () => book(5)));
    const perHour = new Map<number, number>();
    for (const { hour } of booked) perHour.set(hour, (perHour.get(hour) ?? 0) + 1);
    // Thirty at once take the first six hours whole: no hour is passed with a slot left in it.
    expect(perHour).toEqual(new Map([0, 1, 2, 3, 4, 5].map((hour) => [hour, 5])));
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

  it('a domain takes no slot of an hour the whole budget filled, and no slot of the budget once its share is full', async () => {
    const pools = async () => {
      const slots = (await db.collection(MAIL_BUDGETS).get()).docs.map((doc) => doc.get('pool') as string);
      return (hour: number, domain = '') =>
        slots.filter((pool) => pool === `${THIS_HOUR + hour}${domain}`).length;
    };
    for (let i = 0; i < 4; i += 1) await book(4);
    expect((await book(4, { domain: 'school' })).hour).toBe(1);
    let ofPool = await pools();
    expect([ofPool(0), ofPool(0, '-school'), ofPool(1), ofPool(1, '-school')]).toEqual([4, 0, 1, 1]);
    // A budget of 100 a day later: the school's share of its hour is 10, and its 11th takes no budget slot there.
    const later = NOW + 24 * HOUR;
    for (let i = 0; i <= DOMAIN_SHARE_MIN; i += 1) await book(100, { now: later, domain: 'school' });
    ofPool = await pools();
    expect([ofPool(24), ofPool(24, '-school'), ofPool(25), ofPool(25, '-school')]).toEqual([
      DOMAIN_SHARE_MIN,
      DOMAIN_SHARE_MIN,
      1,
      1,
    ]);
  });

  it('passes a full hour with one read, and books a slot with one more and a create', async () => {
    for (let i = 0; i < 3; i += 1) await book(3);
    const calls: DocumentCall[] = [];
    expect((await book(3, { calls })).hour).toBe(1);
    // Hour 0 counted (full); hour 1 counted, then its slot created.
    expect(calls).toEqual(['query', 'query', 'create']);
  });
});
