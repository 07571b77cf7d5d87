import type { DocumentReference } from 'firebase-admin/firestore';
import { beforeEach, describe, expect, it } from 'vitest';
import { testBed } from '../../test-support/bed';
import { expectHttpsError } from '../../test-support/callables';
import { contactWorkerDeps, resetMailerLite } from '../../test-support/mailerlite';
import { HERO, seedSignups, suppressMailbox } from '../../test-support/signups';
import { type EnqueuedTask, handOverDeps, recordingEnqueue } from '../../test-support/tasks';
import { type Clock, systemClock } from '../clock';
import { SIGNUPS } from '../contract';
import { handleDeliverContact } from '../delivery/deliver-contact';
import { applyToParts, partOf } from '../delivery/part-life';
import { type Enqueue, QUEUES } from '../delivery/queue';
import { handleSyncEmailsToMailerlite, SYNC_STATE, type SyncDeps } from './sync-callable';

const bed = testBed({ mailerLite: true });
const { db } = bed;

/**
 * Cloud Tasks as the Sync meets it: each task is kept (a task id seen before is a duplicate), and a contact
 * task is run at once by the real worker against the MailerLite stand-in, as the queue dispatches it.
 */
function liveQueue(): { tasks: EnqueuedTask[]; enqueue: Enqueue; idle: () => Promise<unknown> } {
  const recorded = recordingEnqueue();
  const running: Array<Promise<unknown>> = [];
  const enqueue: Enqueue = async (queue, payload, task) => {
    const result = await recorded.enqueue(queue, payload, task);
    if (result === 'enqueued' && queue === QUEUES.contact) {
      // A RetryLater: Cloud Tasks would try again later.
      running.push(handleDeliverContact(payload, contactWorkerDeps(bed)).catch(() => undefined));
    }
    return result;
  };
  return { tasks: recorded.tasks, enqueue, idle: () => Promise.all(running) };
}

let queue: ReturnType<typeof liveQueue>;
beforeEach(() => {
  queue = liveQueue();
});

function deps(extra: Partial<SyncDeps> & { clock?: Clock } = {}): SyncDeps {
  const clock = extra.clock ?? systemClock;
  return {
    ...handOverDeps(db, queue.enqueue, clock, bed.logger),
    deadline: Date.now() + 540_000,
    ...extra,
    options: { minIntervalMs: 0, settleMs: 3_000, pollMs: 20, ...extra.options },
  };
}

const sync = (extra: Partial<SyncDeps> = {}) => handleSyncEmailsToMailerlite({}, deps(extra));

async function rowOf(email: string): Promise<DocumentReference> {
  const rows = await db.collection(SIGNUPS).where('email', '==', email).get();
  const [row] = rows.docs;
  if (!row) throw new Error(`no row for ${email}`);
  return row.ref;
}

/** The row's contact part after a failed attempt of round 0, as the worker records it. */
async function failedOnce(email: string, code = 'mailerlite 401', reason?: 'configuration') {
  await applyToParts(
    await rowOf(email),
    [['contact', { kind: 'retry', round: 0, code, ...(reason ? { reason } : {}) }]],
    Date.now(),
  );
}

const contactOf = async (email: string) => partOf((await (await rowOf(email)).get()).data(), 'contact');
const upserts = () =>
  bed.ml.state.requests.filter((r) => r.method === 'POST' && r.path === '/api/subscribers');
const contactTasks = () => queue.tasks.filter((task) => task.queue === QUEUES.contact);

describe('sync-emails-to-mailerlite', () => {
  it('hands a failed contact a new round, which the worker delivers; one in MailerLite, or on its way, gets none', async () => {
    await seedSignups(db, [
      { email: 'done@example.com', ...HERO },
      { email: 'queued@example.com', ...HERO },
      { email: 'failed@example.com', ...HERO },
    ]);
    // done@'s round-0 task delivered it; failed@'s was refused (our key, since fixed); queued@'s has not run.
    await handleDeliverContact(
      { signup: (await rowOf('done@example.com')).id, round: 0 },
      contactWorkerDeps(bed),
    );
    await failedOnce('failed@example.com', 'mailerlite 401', 'configuration');
    const upsertsBefore = upserts().length;

    const reply = await sync({ options: { settleMs: 2_000 } });

    // Only failed@ got a task: its next round, which the worker ran at once.
    expect(contactTasks().map((task) => task.payload)).toEqual([
      { signup: (await rowOf('failed@example.com')).id, round: 1 },
    ]);
    expect(await contactOf('failed@example.com')).toMatchObject({ state: 'done', round: 1 });
    expect(upserts().length - upsertsBefore).toBe(1);
    expect(bed.ml.state.subscribers.map((s) => s.email).sort()).toEqual([
      'done@example.com',
      'failed@example.com',
    ]);
    expect(await contactOf('queued@example.com')).toMatchObject({ state: 'pending', round: 0 });
    expect(reply).toEqual({
      success: true,
      message: '2 sign-ups are in MailerLite or unsubscribed; 1 more is on its way.',
      synced: 2,
      error: null,
      remaining: 0,
      rejected: 0,
      skipped: 0,
    });
    // The pass is over: the next one starts from the first row.
    expect((await db.collection(SYNC_STATE.collection).doc(SYNC_STATE.id).get()).data()).toMatchObject({
      cursor: null,
      lease: null,
      last_run: { outcome: 'done' },
    });
    expect(bed.logger.text()).not.toMatch(/@example\.com/);
  });

  it('costs no MailerLite request for a contact its mailbox already has in the group', async () => {
    await seedSignups(db, [
      { email: 'kid@example.com', ...HERO },
      { email: 'KID@example.com', ...HERO },
    ]);
    const [first, second] = (await db.collection(SIGNUPS).orderBy('created_at').get()).docs;
    await handleDeliverContact({ signup: first?.id, round: 0 }, contactWorkerDeps(bed));
    // The second spelling's task failed on the database: it waits out Cloud Tasks' backoff.
    await applyToParts(
      second?.ref as DocumentReference,
      [['contact', { kind: 'retry', round: 0, code: 'database' }]],
      Date.now(),
    );
    const requestsBefore = bed.ml.state.requests.length;

    const reply = await sync();

    expect(contactTasks()).toHaveLength(1);
    expect(partOf((await second?.ref.get())?.data(), 'contact')).toMatchObject({ state: 'done', round: 1 });
    expect(bed.ml.state.requests.length).toBe(requestsBefore);
    expect(reply).toMatchObject({
      success: true,
      synced: 2,
      message: '2 sign-ups are in MailerLite or unsubscribed.',
    });

    // Pressed again: everything is done, so nothing is handed over and MailerLite hears nothing.
    expect(await sync()).toMatchObject({ success: true, synced: 2 });
    expect(contactTasks()).toHaveLength(1);
    expect(bed.ml.state.requests.length).toBe(requestsBefore);
  });

  it('says the setup waits while MailerLite still refuses the key, naming no param, and delivers once it is fixed', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    await failedOnce('kid@example.com', 'mailerlite 401', 'configuration');
    bed.ml.faults.failNext(10, 401, { message: 'Unauthenticated.' });

    const refused = await sync();

    expect(refused.success).toBe(false);
    expect(refused.error).toBe(
      "MailerLite refused the server's setup (its API key, a group or a field): 1 sign-up waits until it is fixed. The functions' logs (add_contact.failed) say what to fix. 0 sign-ups are in MailerLite or unsubscribed.",
    );
    expect(refused.message).toBe(refused.error);
    expect(refused.synced).toBe(0);
    expect(await contactOf('kid@example.com')).toMatchObject({
      state: 'pending',
      round: 1,
      reason: 'configuration',
    });
    expect(bed.ml.state.subscribers).toEqual([]);

    bed.ml.faults.clear();
    const fixed = await sync();
    expect(fixed).toMatchObject({
      success: true,
      synced: 1,
      message: '1 sign-up is in MailerLite or unsubscribed.',
    });
    expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['kid@example.com']);
    expect(contactTasks().map((task) => (task.payload as { round: number }).round)).toEqual([1, 2]);
  });

  it("never contacts a mailbox that unsubscribed, and answers as if it had not: the reply tells no one's history", async () => {
    const rows = [
      { email: 'kid@example.com', ...HERO },
      { email: 'control@example.com', ...HERO },
    ];
    const pressWith = async (suppressed: boolean) => {
      await bed.firestore.reset();
      resetMailerLite(bed.ml);
      await seedSignups(db, rows);
      if (suppressed) await suppressMailbox(db, 'kid@example.com');
      for (const { email } of rows) await failedOnce(email, 'mailerlite 503');
      return sync();
    };
    const plain = await pressWith(false);
    const withSuppressed = await pressWith(true);

    expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['control@example.com']);
    expect(await contactOf('kid@example.com')).toMatchObject({ state: 'skipped', reason: 'suppressed' });
    expect(withSuppressed).toEqual(plain);
    expect(plain).toMatchObject({ success: true, synced: 2 });
  });

  it('is not stopped by rows that are not sign-ups, and hands a row the trigger never reached to its work', async () => {
    await seedSignups(db, [{ email: 'first@example.com', ...HERO }]);
    const junk = db.collection(SIGNUPS);
    await junk.add({ created_at: new Date(), email: 'not an address', ...HERO });
    await junk.add({
      created_at: new Date(),
      email: 'odd@example.com',
      ...HERO,
      delivery: { contact: 'garbage' },
    });
    await junk.add({
      created_at: new Date(),
      email: 'odd2@example.com',
      ...HERO,
      delivery: { contact: { state: 'lost' } },
    });
    await seedSignups(db, [{ email: 'late@example.com', ...HERO }], Date.now() + 10, { keyed: false });
    await failedOnce('first@example.com', 'mailerlite 503');

    const reply = await sync();

    expect(reply).toEqual({
      success: true,
      message:
        '2 sign-ups are in MailerLite or unsubscribed. 3 stored documents were not a sign-up and were skipped.',
      synced: 2,
      error: null,
      remaining: 0,
      rejected: 0,
      skipped: 3,
    });
    // late@ got the trigger's work: both parts, each on round 0, and their two tasks.
    const late = await rowOf('late@example.com');
    expect(
      queue.tasks.filter((task) => (task.payload as { signup: string }).signup === late.id),
    ).toHaveLength(2);
    expect(bed.ml.state.subscribers.map((s) => s.email).sort()).toEqual([
      'first@example.com',
      'late@example.com',
    ]);
  });

  it('stops before its deadline with its cursor written, and the next press continues from it', async () => {
    const people = Array.from({ length: 7 }, (_, i) => ({ email: `p${i}@example.com`, ...HERO }));
    await seedSignups(db, people, Date.now(), { keyed: false });
    // The clock jumps past the run's stop once the first row is indexed: the first page (3 rows) is finished.
    let late = false;
    const clock: Clock = { now: () => Date.now() + (late ? 600_000 : 0), sleep: systemClock.sleep };
    const base = deps({ clock, options: { pageSize: 3, minIntervalMs: 60_000 } });
    const cut = await handleSyncEmailsToMailerlite(null, {
      ...base,
      index: (ref) => {
        late = true;
        return base.index(ref);
      },
    });
    expect(cut).toMatchObject({ success: true, remaining: 4 });
    expect(cut.message).toMatch(/ 4 sign-ups remain: run the sync again to continue\.$/);
    expect(contactTasks()).toHaveLength(3);
    await queue.idle();

    // Continued at once (a run cut by its deadline does not hold the next one back), from the cursor.
    const rest = await sync({ options: { pageSize: 3, minIntervalMs: 60_000 } });
    expect(rest).toMatchObject({ success: true, remaining: 0, synced: 4 });
    expect(rest.message).toBe('Continuing the last sync: 4 sign-ups are in MailerLite or unsubscribed.');
    expect(new Set(contactTasks().map((task) => task.id)).size).toBe(7);
    expect(bed.ml.state.subscribers).toHaveLength(7);

    // A full pass ended: the next press within the minute is refused, and one after it starts from the first row.
    const tooSoon = await sync({ options: { minIntervalMs: 60_000 } });
    expect(tooSoon).toEqual({
      success: false,
      message: expect.stringMatching(/^A sync finished moments ago\. Try again in \d+ seconds?\.$/),
      error: tooSoon.message,
      synced: 0,
      remaining: null,
      rejected: 0,
      skipped: 0,
    });
    expect(await sync()).toMatchObject({
      success: true,
      synced: 7,
      message: '7 sign-ups are in MailerLite or unsubscribed.',
    });
  });

  it("runs one at a time: a press while another runs is refused, and a crashed run's lease is taken over once expired", async () => {
    await seedSignups(db, [{ email: 'slow@example.com', ...HERO }]);
    // slow@'s first task is on its way and never lands: the first run waits for it, holding the lease. Its
    // wait stands still until the second press has been answered, so a slow machine cannot end it first.
    let letGo = () => {};
    const pressed = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    const held: Clock = { now: systemClock.now, sleep: (ms) => pressed.then(() => systemClock.sleep(ms)) };
    const first = sync({ clock: held, options: { settleMs: 1_500 } });
    await expect
      .poll(async () => (await db.collection(SYNC_STATE.collection).doc(SYNC_STATE.id).get()).get('lease'))
      .not.toBeNull();
    expect(await sync()).toMatchObject({
      success: false,
      error: 'A sync is already running. Try again when it has finished.',
    });
    letGo();
    expect(await first).toMatchObject({
      success: true,
      message: '0 sign-ups are in MailerLite or unsubscribed; 1 more is on its way.',
    });

    // A run that died holding the lease: the next one waits for it to expire, then takes it over.
    await db
      .collection(SYNC_STATE.collection)
      .doc(SYNC_STATE.id)
      .set({ lease: { owner: 'dead', expires_at: new Date(Date.now() + 60_000) }, cursor: null });
    expect(await sync()).toMatchObject({ success: false, error: expect.stringMatching(/already running/) });
    const later: Clock = { now: () => Date.now() + 120_000, sleep: systemClock.sleep };
    expect(await sync({ clock: later, options: { settleMs: 0 } })).toMatchObject({ success: true });
    expect(bed.logger.events()).toContain('sync.lease_taken_over');
  });

  it('refuses a body with fields as invalid-argument, and changes nothing', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    await failedOnce('kid@example.com', 'mailerlite 503');
    await expectHttpsError(
      handleSyncEmailsToMailerlite({ email: 'kid@example.com' }, deps()),
      'invalid-argument',
    );
    await expectHttpsError(handleSyncEmailsToMailerlite([], deps()), 'invalid-argument');
    expect((await db.collection(SYNC_STATE.collection).doc(SYNC_STATE.id).get()).exists).toBe(false);
    expect(queue.tasks).toEqual([]);
  });
});
