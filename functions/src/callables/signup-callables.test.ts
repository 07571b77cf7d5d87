// The two callables the page makes after its insert: they check the body and enqueue one task, nothing
// else (no database, no MailerLite, no mail), so every well-formed call does the same work and gets the
// same reply. What the tasks then do is tested beside the workers (src/tasks/).
import { describe, expect, it } from 'vitest';
import {
  BAD_EMAILS,
  expectHttpsError,
  type RecordingLogger,
  recordingLogger,
} from '../../test-support/stack';
import type { Clock } from '../clock';
import { BUCKET_MS, type Enqueue, QUEUES, taskId } from '../tasks/queue';
import { handleAddContactToMailerlite } from './add-contact-to-mailerlite';
import { handleSendThankYouEmail } from './send-thank-you-email';

const SECRET = 'test-unsubscribe-secret';
const NOW = Date.UTC(2026, 10, 24, 12, 0, 30);

interface Enqueued {
  queue: string;
  payload: unknown;
  id: string;
}

/** Cloud Tasks as the callables see it: a task id seen before is a duplicate, enqueued once. */
function recordingQueue() {
  const enqueued: Enqueued[] = [];
  const ids = new Set<string>();
  const enqueue: Enqueue = async (queue, payload, id) => {
    if (ids.has(id)) return 'duplicate';
    ids.add(id);
    enqueued.push({ queue, payload, id });
    return 'enqueued';
  };
  return { enqueued, enqueue };
}

const fixedClock = (now: number): Clock => ({ now: () => now, sleep: async () => {} });

function setup(now = NOW) {
  const queue = recordingQueue();
  const logger: RecordingLogger = recordingLogger();
  const deps = { enqueue: queue.enqueue, secret: SECRET, clock: fixedClock(now), logger };
  return { ...queue, logger, deps };
}

describe('add-contact-to-mailerlite', () => {
  it('enqueues one deliver-contact task with the pairing, and answers accepted', async () => {
    const { enqueued, deps } = setup();
    expect(
      await handleAddContactToMailerlite(
        { email: ' Kid@Example.com ', source: 'final_cta', subscription_type: 'club' },
        deps,
      ),
    ).toEqual({ status: 'accepted' });
    expect(enqueued).toEqual([
      {
        queue: QUEUES.contact,
        payload: {
          email: 'Kid@Example.com',
          subscription_type: 'club',
          source: 'final_cta',
        },
        id: taskId(SECRET, QUEUES.contact, 'kid@example.com', 'club', NOW),
      },
    ]);
  });

  it('a second press (or a client retry) in the same minute enqueues nothing new; another list does', async () => {
    const { enqueued, deps } = setup();
    await handleAddContactToMailerlite({ email: 'kid@example.com', source: 'hero_form' }, deps);
    await handleAddContactToMailerlite({ email: 'KID@example.com', source: 'hero_form' }, deps);
    await handleAddContactToMailerlite(
      { email: 'kid@example.com', source: 'final_cta', subscription_type: 'club' },
      deps,
    );
    expect(enqueued.map((task) => (task.payload as { source: string }).source)).toEqual([
      'hero_form',
      'final_cta',
    ]);
  });

  it('answers byte for byte the same for any well-formed address, and logs nothing about it', async () => {
    const { deps, logger } = setup();
    const replies = await Promise.all(
      ['stored@example.com', 'stranger@example.com', 'erased@example.com', 'thanked@example.com'].map(
        async (email) =>
          JSON.stringify(await handleAddContactToMailerlite({ email, source: 'hero_form' }, deps)),
      ),
    );
    expect(new Set(replies)).toEqual(new Set(['{"status":"accepted"}']));
    expect(logger.entries).toEqual([]);
  });

  it('says unavailable when the task cannot be enqueued (and logs the address masked only)', async () => {
    const { deps, logger } = setup();
    const failing = {
      ...deps,
      enqueue: async () => {
        throw new Error('Cloud Tasks unavailable');
      },
    };
    await expectHttpsError(
      handleAddContactToMailerlite({ email: 'kid@example.com', source: 'hero_form' }, failing),
      'unavailable',
    );
    expect(logger.events()).toEqual(['add_contact.enqueue_failed']);
    expect(logger.text()).not.toContain('kid@example.com');
  });

  describe('refuses bad input with a clear message and enqueues nothing', () => {
    it.each(BAD_EMAILS)('an email that is %s', async (_, email) => {
      const { enqueued, deps, logger } = setup();
      await expectHttpsError(
        handleAddContactToMailerlite({ email, source: 'hero_form' }, deps),
        'invalid-argument',
      );
      expect(enqueued).toEqual([]);
      expect(logger.entries).toEqual([
        { severity: 'warn', event: 'input.rejected', fields: { callable: 'add-contact-to-mailerlite' } },
      ]);
    });

    it.each<[string, unknown, RegExp]>([
      ['no body', undefined, /email and source/],
      ['null', null, /email and source/],
      ['an array', [{ email: 'kid@example.com', source: 'hero_form' }], /email and source/],
      ['a string', 'kid@example.com', /email and source/],
      ['no email', { source: 'hero_form' }, /email is required/],
      ['no source', { email: 'kid@example.com' }, /source is required/],
      ['a wrong source', { email: 'kid@example.com', source: 1 }, /source/],
      [
        'a wrong type',
        { email: 'kid@example.com', source: 'final_cta', subscription_type: ['club'] },
        /subscription_type/,
      ],
      [
        'a mismatched pair',
        { email: 'kid@example.com', source: 'final_cta', subscription_type: 'updates' },
        /does not go with source final_cta/,
      ],
      ['an extra field', { email: 'kid@example.com', source: 'hero_form', groups: ['1'] }, /groups/],
      ['a 10 kB source', { email: 'kid@example.com', source: 'x'.repeat(10_240) }, /source/],
    ])('%s', async (_, body, message) => {
      const { enqueued, deps } = setup();
      const error = await expectHttpsError(handleAddContactToMailerlite(body, deps), 'invalid-argument');
      expect(error.message).toMatch(message);
      expect(enqueued).toEqual([]);
    });
  });
});

describe('send-thank-you-email', () => {
  it('enqueues one deliver-thank-you task, and a second press in the same minute nothing', async () => {
    const { enqueued, deps } = setup();
    expect(await handleSendThankYouEmail({ email: 'Kid@Example.com' }, deps)).toEqual({ status: 'accepted' });
    expect(await handleSendThankYouEmail({ email: 'kid@example.com' }, deps)).toEqual({ status: 'accepted' });
    expect(enqueued).toEqual([
      {
        queue: QUEUES.thankYou,
        payload: { email: 'Kid@Example.com' },
        id: taskId(SECRET, QUEUES.thankYou, 'kid@example.com', '', NOW),
      },
    ]);
  });

  it('refuses bad input with a clear message and enqueues nothing', async () => {
    for (const body of [undefined, { email: 'not an address' }, { email: 'kid@example.com', extra: 1 }]) {
      const { enqueued, deps } = setup();
      await expectHttpsError(handleSendThankYouEmail(body, deps), 'invalid-argument');
      expect(enqueued).toEqual([]);
    }
  });

  it('says unavailable when the task cannot be enqueued', async () => {
    const { deps } = setup();
    const failing = { ...deps, enqueue: () => Promise.reject(new Error('down')) };
    await expectHttpsError(handleSendThankYouEmail({ email: 'kid@example.com' }, failing), 'unavailable');
  });
});

describe('task ids', () => {
  const id = (secret: string, email: string, list: string, now: number) =>
    taskId(secret, QUEUES.contact, email, list, now);

  it('are the same within a minute for the same address and list, and differ across lists and minutes', () => {
    const bucketStart = Math.floor(NOW / BUCKET_MS) * BUCKET_MS;
    expect(id(SECRET, 'kid@example.com', 'updates', bucketStart)).toBe(
      id(SECRET, 'kid@example.com', 'updates', bucketStart + BUCKET_MS - 1),
    );
    expect(id(SECRET, 'kid@example.com', 'updates', bucketStart)).not.toBe(
      id(SECRET, 'kid@example.com', 'updates', bucketStart + BUCKET_MS),
    );
    expect(id(SECRET, 'kid@example.com', 'updates', NOW)).not.toBe(
      id(SECRET, 'kid@example.com', 'club', NOW),
    );
  });

  it('cannot be computed from the address without the secret, and carry no address', () => {
    const ours = id(SECRET, 'kid@example.com', 'updates', NOW);
    expect(ours).not.toBe(id('another-secret', 'kid@example.com', 'updates', NOW));
    expect(ours).not.toMatch(/kid|example/i);
    expect(ours).toMatch(/^deliver-contact-\d+-[A-Za-z0-9_-]{43}$/);
  });
});
