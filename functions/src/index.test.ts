// The deployable module: what Firebase discovers in it, and the onCall wrappers bound to their params
// (read from the environment, as the Functions emulator and Cloud Functions provide them), called
// through `.run` against the stand-ins.

import type { CallableRequest } from 'firebase-functions/v2/https';
import { describe, expect, it } from 'vitest';
import { testBed } from '../test-support/bed';
import { HERO, seedSignups } from '../test-support/signups';
import type { RecordedTask } from '../test-support/tasks';
import { CALLABLES } from './contract';
import { ERASURE_QUEUE, QUEUES } from './delivery/queue';
import * as functions from './index';

interface Endpoint {
  platform: string;
  region: string[];
  callableTrigger?: object;
  httpsTrigger?: object;
  taskQueueTrigger?: { retryConfig?: Record<string, unknown>; rateLimits?: Record<string, unknown> };
  scheduleTrigger?: { schedule?: string; timeZone?: string };
  timeoutSeconds?: number;
  secretEnvironmentVariables?: Array<{ key: string }>;
}

type Callable = ((...args: unknown[]) => unknown) & {
  __endpoint: Endpoint;
  run(request: CallableRequest): Promise<unknown>;
};

/** What firebase-functions' loader reports: ids joined with "-", entry points with ".". */
function discover(module: object, prefix = ''): Map<string, { entryPoint: string; fn: Callable }> {
  const found = new Map<string, { entryPoint: string; fn: Callable }>();
  for (const [name, value] of Object.entries(module)) {
    if (typeof value === 'function' && '__endpoint' in value) {
      const id = prefix + name;
      found.set(id, { entryPoint: id.replace(/-/g, '.'), fn: value as Callable });
    } else if (value && typeof value === 'object') {
      for (const [id, entry] of discover(value, `${prefix}${name}-`)) found.set(id, entry);
    }
  }
  return found;
}

/** How the Functions emulator and the Functions Framework find a function: by walking its entry point. */
function resolve(entryPoint: string): unknown {
  return entryPoint
    .split('.')
    .reduce<unknown>((module, part) => (module as Record<string, unknown>)?.[part], functions);
}

const discovered = discover(functions);

function callable(id: string): Callable {
  const found = discovered.get(id);
  if (!found) throw new Error(`${id} is not exported`);
  return found.fn;
}

describe('the functions module', () => {
  it("exports the contract's three callables under their names, their two task queues, the unsubscribe endpoint and its erasures' queue, the three jobs and the sign-up trigger", () => {
    expect([...discovered.keys()].sort()).toEqual(
      [
        ...Object.values(CALLABLES),
        ...Object.values(QUEUES),
        ERASURE_QUEUE,
        'finish-erasures',
        'index-signup',
        'reconcile-deliveries',
        'retention',
        'unsubscribe',
      ].sort(),
    );
    expect(Object.values(CALLABLES).sort()).toEqual([
      'add-contact-to-mailerlite',
      'send-thank-you-email',
      'sync-emails-to-mailerlite',
    ]);
  });

  it.each([...discovered])(
    '%s can be found by its entry point, as the runtime looks it up',
    (_, { entryPoint, fn }) => {
      expect(resolve(entryPoint)).toBe(fn);
    },
  );

  it('makes them 2nd-gen callables in us-central1 with the secrets they need bound', () => {
    const endpoint = (id: string) => callable(id).__endpoint;
    const secrets = (id: string) => endpoint(id).secretEnvironmentVariables?.map((secret) => secret.key);
    for (const id of Object.values(CALLABLES)) {
      expect(endpoint(id)).toMatchObject({ platform: 'gcfv2', region: ['us-central1'], callableTrigger: {} });
    }
    // The two sign-up callables only check the body: they hold no secret.
    expect(secrets('add-contact-to-mailerlite')).toBeUndefined();
    expect(secrets('send-thank-you-email')).toBeUndefined();
    const KEYS = ['UNSUBSCRIBE_SECRET', 'MAILBOX_KEY_SECRET'];
    // The Sync only hands rows to their tasks, named under the mailbox key's secret: it calls no MailerLite.
    expect(secrets('sync-emails-to-mailerlite')).toEqual(['MAILBOX_KEY_SECRET']);
    expect(secrets('deliver-contact')).toEqual(['MAILERLITE_API_KEY', ...KEYS]);
    expect(secrets('deliver-thank-you')).toEqual(['SMTP_URL', ...KEYS]);
    expect(secrets('index-signup')).toEqual(['MAILBOX_KEY_SECRET']);
    expect(endpoint('index-signup')).toMatchObject({
      platform: 'gcfv2',
      eventTrigger: {
        eventType: 'google.cloud.firestore.document.v1.created',
        eventFilterPathPatterns: { document: 'email_subscriptions/{signupId}' },
        retry: true,
      },
    });
    for (const id of Object.values(QUEUES)) {
      expect(endpoint(id)).toMatchObject({
        platform: 'gcfv2',
        region: ['us-central1'],
        // Retried for at least a day, with backoff.
        taskQueueTrigger: { retryConfig: { maxRetrySeconds: 172_800, minBackoffSeconds: 10 } },
      });
    }
    // MailerLite's 120 requests a minute, less what the unsubscribe path's forgets need.
    expect(endpoint('deliver-contact').taskQueueTrigger?.rateLimits).toMatchObject({
      maxDispatchesPerSecond: 115 / 60,
      maxConcurrentDispatches: 6,
    });
    expect(endpoint('unsubscribe')).toMatchObject({
      platform: 'gcfv2',
      region: ['us-central1'],
      httpsTrigger: {},
    });
    expect(secrets('unsubscribe')).toEqual(['MAILERLITE_API_KEY', ...KEYS]);
    // An erasure MailerLite left pending: retried for days, backing off to an hour, one at a time.
    expect(endpoint(ERASURE_QUEUE)).toMatchObject({
      platform: 'gcfv2',
      region: ['us-central1'],
      taskQueueTrigger: {
        retryConfig: { maxRetrySeconds: 259_200, minBackoffSeconds: 60, maxBackoffSeconds: 3600 },
        rateLimits: { maxConcurrentDispatches: 1 },
      },
    });
    expect(secrets(ERASURE_QUEUE)).toEqual(['MAILERLITE_API_KEY', ...KEYS]);
    expect(endpoint('retention')).toMatchObject({
      platform: 'gcfv2',
      scheduleTrigger: { schedule: 'every day 03:17', timeZone: 'Etc/UTC' },
    });
    expect(endpoint('finish-erasures')).toMatchObject({
      platform: 'gcfv2',
      scheduleTrigger: { schedule: 'every 30 minutes', timeZone: 'Etc/UTC' },
    });
    expect(secrets('finish-erasures')).toEqual(['MAILERLITE_API_KEY', ...KEYS]);
    expect(endpoint('reconcile-deliveries')).toMatchObject({
      platform: 'gcfv2',
      scheduleTrigger: { schedule: 'every 10 minutes', timeZone: 'Etc/UTC' },
    });
    // It names the tasks it enqueues (delivery/queue.ts, deliveryTaskId) and keys rows the trigger never reached.
    expect(secrets('reconcile-deliveries')).toEqual(['MAILBOX_KEY_SECRET']);
    expect(endpoint('sync-emails-to-mailerlite').timeoutSeconds).toBe(540);
  });
});

describe('the onCall wrappers, bound to their params', () => {
  const bed = testBed({ deployed: true });

  const call = (id: string, data: unknown) =>
    callable(id).run({
      data,
      rawRequest: {},
      acceptsStreaming: false,
    } as CallableRequest);

  /** Cloud Tasks' part: each task enqueued goes to the function its queue is named after. */
  const dispatch = (task: RecordedTask) =>
    callable(task.queue).run({ data: task.payload } as CallableRequest);

  it('runs a sign-up through the trigger, the two callables, the two queues and the sync, as deployed', async () => {
    await seedSignups(bed.db, [{ email: 'kid@example.com', ...HERO }], Date.now(), { keyed: false });
    const [row] = (await bed.db.collection('email_subscriptions').get()).docs;
    if (!row) throw new Error('not stored');
    // What the Firestore trigger is handed for the new row.
    await callable('index-signup').run({ data: row, params: { signupId: row.id } } as never);
    expect(
      await call('add-contact-to-mailerlite', { email: 'kid@example.com', source: 'hero_form' }),
    ).toEqual({ status: 'accepted' });
    expect(await call('send-thank-you-email', { email: 'kid@example.com' })).toEqual({ status: 'accepted' });
    // Only the row's trigger enqueued: one task a queue, naming the row, no address.
    expect(bed.tasks.tasks.map((task) => [task.queue, task.payload])).toEqual([
      [QUEUES.contact, { signup: row.id, round: 0 }],
      [QUEUES.thankYou, { signup: row.id, round: 0 }],
    ]);
    expect(JSON.stringify(bed.tasks.tasks)).not.toContain('kid');
    for (const task of bed.tasks.tasks) await dispatch(task);
    expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['kid@example.com']);
    expect((await bed.outbox.messages()).map((m) => m.to)).toEqual([['kid@example.com']]);

    expect(await call('sync-emails-to-mailerlite', null)).toMatchObject({
      success: true,
      synced: 1,
      error: null,
    });
    expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['kid@example.com']);
  });
});
