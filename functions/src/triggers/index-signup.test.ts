import type { Firestore } from 'firebase-admin/firestore';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FirestoreHarness, startFirestore } from '../../test-support/firestore';
import { type RecordingLogger, recordingLogger } from '../../test-support/logs';
import { HERO, MAILBOX_SECRET, seedSignups } from '../../test-support/signups';
import { recordingEnqueue } from '../../test-support/tasks';
import { SIGNUPS } from '../contract';
import { mailboxKey } from '../privacy/mailbox-key';
import { MAILBOX_KEY_FIELD, mailboxSignups, storedSignups } from '../signups/lookup';
import { deliveryTaskId, type Enqueue, QUEUES } from '../tasks/queue';
import { indexSignup } from './index-signup';

let firestore: FirestoreHarness;
let db: Firestore;
let logger: RecordingLogger;

beforeAll(async () => {
  firestore = await startFirestore();
  db = firestore.db;
});
afterAll(() => firestore.stop());
beforeEach(async () => {
  await firestore.reset();
  logger = recordingLogger();
});

/** The tasks the trigger enqueued, as Cloud Tasks would hold them: one per id. */
let queue: ReturnType<typeof recordingEnqueue>;
const enqueued = () => new Map(queue.tasks.map(({ id, ...task }) => [id, task]));
beforeEach(() => {
  queue = recordingEnqueue();
});
const triggerDeps = () => ({ mailboxSecret: MAILBOX_SECRET, enqueue: queue.enqueue, logger });

const index = async (email: string) => {
  await seedSignups(db, [{ email, ...HERO }], Date.now(), { keyed: false });
  const [row] = (await db.collection(SIGNUPS).where('email', '==', email).get()).docs;
  if (!row) throw new Error('not stored');
  return { row, result: await indexSignup({ ref: row.ref, data: row.data() }, triggerDeps()) };
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
    // The row keeps the page's fields as written: the key is the only one added.
    expect(Object.keys(rows[0]?.data() ?? {}).sort()).toEqual(
      ['created_at', 'email', MAILBOX_KEY_FIELD, 'source', 'subscription_type'].sort(),
    );
  });

  it("enqueues the row's own contact and thank-you, to run at once, under the ids the callables use: a retried trigger enqueues nothing twice", async () => {
    const { row } = await index('Kid@Example.com');
    const key = mailboxKey(MAILBOX_SECRET, 'kid@example.com');
    const at = (row.get('created_at') as { toMillis(): number }).toMillis();
    expect([...enqueued().entries()]).toEqual([
      [
        deliveryTaskId(MAILBOX_SECRET, QUEUES.contact, { mailboxKey: key, list: 'updates', at }),
        {
          queue: QUEUES.contact,
          payload: { email: 'Kid@Example.com', subscription_type: 'updates', source: 'hero_form' },
        },
      ],
      [
        deliveryTaskId(MAILBOX_SECRET, QUEUES.thankYou, { mailboxKey: key, list: '', at }),
        { queue: QUEUES.thankYou, payload: { email: 'Kid@Example.com' } },
      ],
    ]);
    expect(await indexSignup({ ref: row.ref, data: row.data() }, triggerDeps())).toBe('delivery_enqueued');
    expect(enqueued().size).toBe(2);
    // The log names the row's mailbox by its handle, never the address.
    expect(JSON.stringify(logger.entries)).not.toMatch(/kid@example\.com/i);
  });

  it('throws when Cloud Tasks refuses, so the trigger is retried and the row is not left undelivered', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }], Date.now(), { keyed: false });
    const [row] = (await db.collection(SIGNUPS).get()).docs;
    if (!row) throw new Error('not stored');
    const refusing: Enqueue = async () => {
      throw new Error('UNAVAILABLE');
    };
    await expect(
      indexSignup({ ref: row.ref, data: row.data() }, { ...triggerDeps(), enqueue: refusing }),
    ).rejects.toThrow('UNAVAILABLE');
    expect(await indexSignup({ ref: row.ref, data: row.data() }, triggerDeps())).toBe('delivery_enqueued');
    expect(enqueued().size).toBe(2);
  });

  it('leaves a row erased before it ran erased, and enqueues nothing for it', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }], Date.now(), { keyed: false });
    const [row] = (await db.collection(SIGNUPS).get()).docs;
    if (!row) throw new Error('not stored');
    const data = row.data();
    await row.ref.delete();
    expect(await indexSignup({ ref: row.ref, data }, triggerDeps())).toBe('gone');
    expect((await db.collection(SIGNUPS).get()).size).toBe(0);
    expect(enqueued().size).toBe(0);
  });

  it('gives no key to a row the grammar refuses, with one log line and no address', async () => {
    const ref = db.collection(SIGNUPS).doc();
    await ref.set({ email: 'kid@localhost', ...HERO, created_at: new Date() });
    expect(await indexSignup({ ref, data: (await ref.get()).data() ?? {} }, triggerDeps())).toBe(
      'not_an_address',
    );
    expect((await ref.get()).get(MAILBOX_KEY_FIELD)).toBeUndefined();
    expect(logger.events()).toEqual(['signup.not_indexed']);
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
