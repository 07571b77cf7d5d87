import { beforeEach, describe, expect, it } from 'vitest';
import { testBed } from '../../test-support/bed';
import { HERO, MAILBOX_SECRET, seedSignups } from '../../test-support/signups';
import { recordingEnqueue } from '../../test-support/tasks';
import { systemClock } from '../clock';
import { SIGNUPS } from '../contract';
import { mailboxKey } from '../privacy/mailbox-key';
import { MAILBOX_KEY_FIELD, mailboxSignups, storedSignups } from '../signups/lookup';
import { type IndexSignupDeps, indexSignup } from './index-signup';
import { CONFIRM_WAIT_MS, enqueuePart, QUEUE_WAIT_MS, rowOfTasks } from './part-life';
import { deliveryTaskId, type Enqueue, QUEUES, RETRY, retryWindowMs } from './queue';
import { RECONCILE_EVERY_MS } from './reconcile-deliveries';

const bed = testBed();
const { db } = bed;

/** The tasks the trigger enqueued, as Cloud Tasks would hold them: one per id. */
let queue: ReturnType<typeof recordingEnqueue>;
const enqueued = () => new Map(queue.tasks.map(({ id, ...task }) => [id, task]));
beforeEach(() => {
  queue = recordingEnqueue();
});
const triggerDeps = (enqueue: Enqueue = queue.enqueue): IndexSignupDeps => ({
  mailboxSecret: MAILBOX_SECRET,
  enqueuePart: enqueuePart(enqueue, MAILBOX_SECRET),
  clock: systemClock,
  logger: bed.logger,
});

const index = async (email: string) => {
  await seedSignups(db, [{ email, ...HERO }], Date.now(), { keyed: false });
  const [row] = (await db.collection(SIGNUPS).where('email', '==', email).get()).docs;
  if (!row) throw new Error('not stored');
  return { row, result: await indexSignup(row.ref, triggerDeps()) };
};

describe('index-signup (the trigger on each new sign-up)', () => {
  it('writes the mailbox key, so every spelling of one mailbox is found by one equality query', async () => {
    for (const email of ['Kid.Teen@gmail.com', 'kidteen+goody@googlemail.com', 'friend@example.com']) {
      expect((await index(email)).result).toBe('delivery_enqueued');
    }
    const rows = await mailboxSignups(db, mailboxKey(MAILBOX_SECRET, 'kidteen@gmail.com'), 10);
    expect(rows.map((row) => row.get('email')).sort()).toEqual([
      'Kid.Teen@gmail.com',
      'kidteen+goody@googlemail.com',
    ]);
    // The row keeps the page's fields as written: the key and the delivery state are the only ones added.
    expect(Object.keys(rows[0]?.data() ?? {}).sort()).toEqual(
      ['created_at', 'delivery', 'email', MAILBOX_KEY_FIELD, 'source', 'subscription_type'].sort(),
    );
  });

  it("writes both parts pending and enqueues the row's contact and thank-you at once, naming the row: a retried trigger enqueues nothing twice", async () => {
    const before = Date.now();
    const { row } = await index('Kid@Example.com');
    expect([...enqueued().entries()]).toEqual([
      [
        deliveryTaskId(MAILBOX_SECRET, QUEUES.contact, rowOfTasks(row), 0),
        { queue: QUEUES.contact, payload: { signup: row.id, round: 0 } },
      ],
      [
        deliveryTaskId(MAILBOX_SECRET, QUEUES.thankYou, rowOfTasks(row), 0),
        { queue: QUEUES.thankYou, payload: { signup: row.id, round: 0 } },
      ],
    ]);
    const delivery = (await row.ref.get()).get('delivery');
    for (const part of [delivery.contact, delivery.thank_you]) {
      expect(part).toMatchObject({ state: 'pending', attempts: 0, round: 0 });
      // The reconciler looks again once the tasks' whole retry window and the queue's wait have passed.
      expect(part.due_at.toMillis()).toBeGreaterThanOrEqual(before + QUEUE_WAIT_MS + retryWindowMs(RETRY));
    }
    expect(await indexSignup(row.ref, triggerDeps())).toBe('delivery_enqueued');
    expect(enqueued().size).toBe(2);
    // The log names the row's mailbox by its handle, never the address.
    expect(JSON.stringify(bed.logger.entries)).not.toMatch(/kid@example\.com/i);
  });

  it('keeps a delivery state already written (a retried trigger, the sweep): a settled part is not enqueued again', async () => {
    const { row } = await index('kid@example.com');
    await row.ref.update({ 'delivery.contact.state': 'done', 'delivery.thank_you.round': 3 });
    queue = recordingEnqueue();
    expect(await indexSignup(row.ref, triggerDeps())).toBe('delivery_enqueued');
    expect(queue.tasks.map((task) => task.id)).toEqual([
      deliveryTaskId(MAILBOX_SECRET, QUEUES.thankYou, rowOfTasks(row), 3),
    ]);
    expect((await row.ref.get()).get('delivery.contact.state')).toBe('done');
  });

  it('throws when Cloud Tasks refuses, so the trigger is retried and the row is not left undelivered', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }], Date.now(), { keyed: false });
    const [row] = (await db.collection(SIGNUPS).get()).docs;
    if (!row) throw new Error('not stored');
    const refusing: Enqueue = async () => {
      throw new Error('UNAVAILABLE');
    };
    const before = Date.now();
    await expect(indexSignup(row.ref, triggerDeps(refusing))).rejects.toThrow('UNAVAILABLE');
    // Committed, its task not confirmed: due soon, for the reconciler (every 10 minutes) should the
    // trigger's retries fail too.
    for (const part of Object.values((await row.ref.get()).get('delivery'))) {
      const due = (part as { due_at: { toMillis(): number } }).due_at.toMillis();
      expect(due).toBeGreaterThanOrEqual(before + CONFIRM_WAIT_MS);
      expect(due).toBeLessThanOrEqual(Date.now() + CONFIRM_WAIT_MS);
      expect(CONFIRM_WAIT_MS + RECONCILE_EVERY_MS).toBeLessThanOrEqual(15 * 60_000);
    }
    expect(await indexSignup(row.ref, triggerDeps())).toBe('delivery_enqueued');
    expect(enqueued().size).toBe(2);
    // Confirmed: due once the task's whole retry window has passed.
    const due = (await row.ref.get()).get('delivery.thank_you.due_at').toMillis();
    expect(due).toBeGreaterThanOrEqual(before + QUEUE_WAIT_MS + retryWindowMs(RETRY));
  });

  it('leaves a row erased before it ran erased, and enqueues nothing for it', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }], Date.now(), { keyed: false });
    const [row] = (await db.collection(SIGNUPS).get()).docs;
    if (!row) throw new Error('not stored');
    await row.ref.delete();
    expect(await indexSignup(row.ref, triggerDeps())).toBe('gone');
    expect((await db.collection(SIGNUPS).get()).size).toBe(0);
    expect(enqueued().size).toBe(0);
  });

  it('gives no key to a row the grammar refuses, with one log line and no address', async () => {
    const ref = db.collection(SIGNUPS).doc();
    await ref.set({ email: 'kid@localhost', ...HERO, created_at: new Date() });
    expect(await indexSignup(ref, triggerDeps())).toBe('not_an_address');
    expect((await ref.get()).get(MAILBOX_KEY_FIELD)).toBeUndefined();
    expect(bed.logger.events()).toEqual(['signup.not_indexed']);
    expect(enqueued().size).toBe(0);
  });
});

describe('the rows a call names (lookup.ts)', () => {
  it('reads at most `limit` of them in all, over the spelling as typed and the normalised one', async () => {
    await seedSignups(db, [
      ...Array.from({ length: 3 }, () => ({ email: 'Kid@Example.com', ...HERO })),
      ...Array.from({ length: 3 }, () => ({ email: 'kid@example.com', ...HERO })),
    ]);
    expect(await storedSignups(db, 'Kid@Example.com', 4)).toHaveLength(4);
    expect(await storedSignups(db, 'Kid@Example.com', 10)).toHaveLength(6);
    expect(await storedSignups(db, 'kid@example.com', 10)).toHaveLength(3);
  });
});
