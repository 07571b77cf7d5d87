import { beforeEach, describe, expect, it } from 'vitest';
import { testBed } from '../../test-support/bed';
import { clockAhead } from '../../test-support/logs';
import { FINAL, HERO, MAILBOX_SECRET, seedSignups } from '../../test-support/signups';
import { handOverDeps, recordingEnqueue } from '../../test-support/tasks';
import { type Clock, systemClock } from '../clock';
import { SIGNUPS } from '../contract';
import { indexSignup } from './index-signup';
import {
  applyToParts,
  CONFIRM_WAIT_MS,
  dueAt,
  enqueuePart,
  GIVE_UP_SLACK_MS,
  QUEUE_WAIT_MS,
  rowOfTasks,
} from './part-life';
import { deliveryTaskId, type Enqueue, QUEUES, RETRY, retryWindowMs } from './queue';
import {
  RECONCILE_EVERY_MS,
  type ReconcileDeps,
  reconcileDeliveries,
  SWEEP_AFTER_MS,
} from './reconcile-deliveries';

const bed = testBed();
const { db } = bed;
let queue: ReturnType<typeof recordingEnqueue>;

beforeEach(() => {
  queue = recordingEnqueue();
});

function deps(clock: Clock = systemClock, perRun?: number): ReconcileDeps {
  return {
    ...handOverDeps(db, queue.enqueue, clock, bed.logger),
    ...(perRun ? { perRun } : {}),
  };
}

const rows = async () => (await db.collection(SIGNUPS).orderBy('created_at').get()).docs;
/** A clock past every part's due time: their tasks' whole retry window has run out. */
const afterTheyGaveUp = () => clockAhead(dueAt(Date.now()).getTime() - Date.now() + 60_000);

describe('the delivery reconciler', () => {
  it("finds nothing to do while the rows' tasks may still run: no task, no log", async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    expect(await reconcileDeliveries(deps())).toEqual({ redriven: 0, swept: 0, failed: 0 });
    expect(queue.tasks).toEqual([]);
    expect(bed.logger.events()).toEqual([]);
  });

  it('enqueues the next round of each part still pending once its tasks gave up, and moves its due time on', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    const [row] = await rows();
    if (!row) throw new Error('not stored');
    await row.ref.update({ 'delivery.contact.state': 'done', 'delivery.contact.due_at': null });
    const later = afterTheyGaveUp();
    expect(await reconcileDeliveries(deps(later))).toEqual({ redriven: 1, swept: 0, failed: 0 });
    expect(queue.tasks).toEqual([
      {
        queue: QUEUES.thankYou,
        payload: { signup: row.id, round: 1 },
        id: deliveryTaskId(MAILBOX_SECRET, QUEUES.thankYou, rowOfTasks(row), 1),
      },
    ]);
    const part = (await row.ref.get()).get('delivery.thank_you');
    expect(part).toMatchObject({ state: 'pending', round: 1 });
    expect(Math.abs(part.due_at.toMillis() - dueAt(later.now()).getTime())).toBeLessThan(5_000);
    expect(bed.logger.entries).toEqual([
      { severity: 'info', event: 'reconcile.run', fields: { redriven: 1, swept: 0, failed: 0 } },
    ]);
    // The next run, at the same time, finds it not due any more.
    expect(await reconcileDeliveries(deps(later))).toEqual({ redriven: 0, swept: 0, failed: 0 });
  });

  it("re-drives within 15 minutes the parts whose enqueue failed after the trigger's commit (Cloud Tasks down, a grant missing)", async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }], Date.now(), { keyed: false });
    const [row] = await rows();
    if (!row) throw new Error('not stored');
    const refusing: Enqueue = async () => {
      throw Object.assign(new Error('PERMISSION_DENIED'), { code: 7 });
    };
    await expect(
      indexSignup(row.ref, {
        mailboxSecret: MAILBOX_SECRET,
        enqueuePart: enqueuePart(refusing, MAILBOX_SECRET),
        clock: systemClock,
        logger: bed.logger,
      }),
    ).rejects.toThrow('PERMISSION_DENIED');
    expect(await reconcileDeliveries(deps())).toEqual({ redriven: 0, swept: 0, failed: 0 });
    // The first run after the short due time (at most CONFIRM_WAIT_MS + 10 minutes after the commit).
    const soon = clockAhead(CONFIRM_WAIT_MS + 1_000);
    expect(await reconcileDeliveries(deps(soon))).toEqual({ redriven: 2, swept: 0, failed: 0 });
    expect(queue.tasks.map((task) => [task.queue, task.payload])).toEqual([
      [QUEUES.contact, { signup: row.id, round: 1 }],
      [QUEUES.thankYou, { signup: row.id, round: 1 }],
    ]);
    const delivery = (await row.ref.get()).get('delivery');
    for (const part of [delivery.contact, delivery.thank_you]) {
      expect(part).toMatchObject({ state: 'pending', round: 1 });
      expect(Math.abs(part.due_at.toMillis() - dueAt(soon.now()).getTime())).toBeLessThan(5_000);
    }
    expect(await reconcileDeliveries(deps(soon))).toEqual({ redriven: 0, swept: 0, failed: 0 });
  });

  it('re-drives within 15 minutes a part whose task ran and then gave up, not after the queue wait as well', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    const [row] = await rows();
    if (!row) throw new Error('not stored');
    // The contact task's first attempt failed now (MailerLite down); it is retried for its retry window.
    await applyToParts(
      row.ref,
      [['contact', { kind: 'retry', round: 0, code: 'mailerlite 503' }]],
      Date.now(),
    );
    const gaveUp = Date.now() + retryWindowMs(RETRY);
    expect(await reconcileDeliveries(deps(clockAhead(gaveUp - Date.now() - 60_000)))).toEqual({
      redriven: 0,
      swept: 0,
      failed: 0,
    });
    // The first run at least GIVE_UP_SLACK_MS after it gave up (runs are 10 minutes apart).
    const run = clockAhead(gaveUp - Date.now() + GIVE_UP_SLACK_MS + 1_000);
    expect(await reconcileDeliveries(deps(run))).toEqual({ redriven: 1, swept: 0, failed: 0 });
    expect(GIVE_UP_SLACK_MS + RECONCILE_EVERY_MS).toBeLessThanOrEqual(15 * 60_000);
    expect((await row.ref.get()).get('delivery.contact')).toMatchObject({ state: 'pending', round: 1 });
  });

  it('one failing step does not stop the others: an enqueue refused for one row, a query missing its index', async () => {
    await seedSignups(
      db,
      Array.from({ length: 3 }, (_, i) => ({ email: `kid${i}@example.com`, ...HERO })),
    );
    const [refused] = await rows();
    if (!refused) throw new Error('not stored');
    // Cloud Tasks refuses the enqueues of one row; the contact's due query has no index (a real project whose
    // indexes were not deployed), as Firestore answers it: FAILED_PRECONDITION.
    const enqueue: Enqueue = async (name, payload, task) => {
      if ((payload as { signup?: string }).signup === refused.id) throw new Error('PERMISSION_DENIED');
      return queue.enqueue(name, payload, task);
    };
    const noIndex = new Proxy(db, {
      get(target, key) {
        if (key !== 'collection') return Reflect.get(target, key);
        return (path: string) => {
          const collection = target.collection(path);
          return new Proxy(collection, {
            get(inner, name) {
              if (name !== 'where') return Reflect.get(inner, name).bind?.(inner) ?? Reflect.get(inner, name);
              return (field: string, op: '<=', value: unknown) => {
                if (field === 'delivery.contact.due_at') {
                  throw Object.assign(new Error('9 FAILED_PRECONDITION: The query requires an index'), {
                    code: 9,
                  });
                }
                return inner.where(field, op, value);
              };
            },
          });
        };
      },
    });
    const later = afterTheyGaveUp();
    const report = await reconcileDeliveries({
      ...deps(later),
      db: noIndex,
      enqueuePart: enqueuePart(enqueue, MAILBOX_SECRET),
    });
    // The contact query failed (one step), the refused row's thank-you (one more); the other two went on.
    expect(report).toEqual({ redriven: 2, swept: 0, failed: 2 });
    expect(queue.tasks.map((task) => task.queue)).toEqual([QUEUES.thankYou, QUEUES.thankYou]);
    expect(bed.logger.entries.filter((entry) => entry.event === 'reconcile.step_failed')).toEqual([
      { severity: 'error', event: 'reconcile.step_failed', fields: { step: 'due contact', error: '9' } },
      {
        severity: 'error',
        event: 'reconcile.step_failed',
        fields: { step: 'redrive thank_you', error: 'Error' },
      },
    ]);
    expect(bed.logger.text()).not.toMatch(/@/);
    // The refused row keeps its due time: the next run, with Cloud Tasks back, re-drives it.
    expect(await reconcileDeliveries(deps(later))).toMatchObject({ failed: 0 });
    expect(
      queue.tasks.filter((task) => (task.payload as { signup: string }).signup === refused.id),
    ).toHaveLength(2);
  });

  it('is bounded per run: a backlog is worked through run by run, each part once', async () => {
    await seedSignups(
      db,
      Array.from({ length: 5 }, (_, i) => ({ email: `kid${i}@example.com`, ...FINAL })),
    );
    const later = afterTheyGaveUp();
    expect(await reconcileDeliveries(deps(later, 3))).toEqual({ redriven: 6, swept: 0, failed: 0 });
    expect(await reconcileDeliveries(deps(later, 3))).toEqual({ redriven: 4, swept: 0, failed: 0 });
    expect(await reconcileDeliveries(deps(later, 3))).toEqual({ redriven: 0, swept: 0, failed: 0 });
    expect(new Set(queue.tasks.map((task) => task.id)).size).toBe(10);
  });

  it("does the trigger's work for rows it never reached, once they are old enough, each row once", async () => {
    await seedSignups(
      db,
      [
        { email: 'first@example.com', ...HERO },
        { email: 'second@example.com', ...FINAL },
      ],
      Date.now() - SWEEP_AFTER_MS - 60_000,
      { keyed: false },
    );
    // A row the trigger reached, and one too recent for the sweep.
    await seedSignups(db, [{ email: 'indexed@example.com', ...HERO }], Date.now() - SWEEP_AFTER_MS - 30_000);
    await seedSignups(db, [{ email: 'recent@example.com', ...HERO }], Date.now(), { keyed: false });
    expect(await reconcileDeliveries(deps())).toEqual({ redriven: 0, swept: 2, failed: 0 });
    expect(queue.tasks).toHaveLength(4);
    const byEmail = new Map((await rows()).map((row) => [row.get('email'), row]));
    for (const email of ['first@example.com', 'second@example.com']) {
      expect(byEmail.get(email)?.get('delivery.contact')).toMatchObject({ state: 'pending', round: 0 });
      expect(byEmail.get(email)?.get('mailbox_key')).toEqual(expect.any(String));
    }
    expect(byEmail.get('recent@example.com')?.get('delivery')).toBeUndefined();
    // The cursor has moved past them: the next run reads on from there.
    expect(await reconcileDeliveries(deps())).toEqual({ redriven: 0, swept: 0, failed: 0 });
    expect(queue.tasks).toHaveLength(4);
    // The recent row, once old enough.
    const later = clockAhead(SWEEP_AFTER_MS + 1_000);
    expect((await reconcileDeliveries(deps(later))).swept).toBe(1);
    expect(QUEUE_WAIT_MS).toBeGreaterThan(SWEEP_AFTER_MS);
  });
});
