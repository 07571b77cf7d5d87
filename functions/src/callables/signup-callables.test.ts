// The two callables the page makes after its insert: they check the body and enqueue one task (under the
// id the row's own trigger gives the same work, to run after its time bucket), nothing
// else (no database, no MailerLite, no mail), so every well-formed call does the same work and gets the
// same reply. What the tasks then do is tested beside the workers (src/tasks/).
import { describe, expect, it } from 'vitest';
import { BAD_EMAILS, expectHttpsError } from '../../test-support/callables';
import { type RecordingLogger, recordingLogger } from '../../test-support/logs';
import { recordingEnqueue } from '../../test-support/tasks';
import type { Clock } from '../clock';
import { mailboxKey } from '../privacy/mailbox-key';
import { AFTER_BUCKET_MS, afterBucket, BUCKET_MS, deliveryTaskId, QUEUES } from '../tasks/queue';
import { handleAddContactToMailerlite, handleSendThankYouEmail } from './signup-callables';

const SECRET = 'test-mailbox-key-secret';
const NOW = Date.UTC(2026, 10, 24, 12, 0, 30);

const fixedClock = (now: number): Clock => ({ now: () => now, sleep: async () => {} });

function setup(now = NOW) {
  const { tasks: enqueued, enqueue } = recordingEnqueue();
  const logger: RecordingLogger = recordingLogger();
  const deps = { enqueue, mailboxSecret: SECRET, clock: fixedClock(now), logger };
  return { enqueued, enqueue, logger, deps };
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
        id: id(QUEUES.contact, 'kid@example.com', 'club', NOW),
        // After its bucket: by then every row of the bucket is committed, so the task sees this one.
        notBefore: (Math.floor(NOW / BUCKET_MS) + 1) * BUCKET_MS + AFTER_BUCKET_MS,
      },
    ]);
  });

  it('a second press (or a client retry) in the same bucket enqueues nothing new; another list does', async () => {
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
  it('enqueues one deliver-thank-you task, and a second press in the same bucket nothing', async () => {
    const { enqueued, deps } = setup();
    expect(await handleSendThankYouEmail({ email: 'Kid@Example.com' }, deps)).toEqual({ status: 'accepted' });
    expect(await handleSendThankYouEmail({ email: 'kid@example.com' }, deps)).toEqual({ status: 'accepted' });
    expect(enqueued).toEqual([
      {
        queue: QUEUES.thankYou,
        payload: { email: 'Kid@Example.com' },
        id: id(QUEUES.thankYou, 'kid@example.com', '', NOW),
        notBefore: afterBucket(NOW),
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
  it('are the same within a bucket for the same mailbox and list, and differ across lists and buckets', () => {
    const bucketStart = Math.floor(NOW / BUCKET_MS) * BUCKET_MS;
    const contact = (email: string, list: string, at: number) => id(QUEUES.contact, email, list, at);
    expect(contact('kid@example.com', 'updates', bucketStart)).toBe(
      contact('kid@example.com', 'updates', bucketStart + BUCKET_MS - 1),
    );
    // Every spelling of one mailbox is one piece of work.
    expect(contact('kid@example.com', 'updates', NOW)).toBe(contact('Kid+Again@Example.com', 'updates', NOW));
    expect(contact('kid@example.com', 'updates', bucketStart)).not.toBe(
      contact('kid@example.com', 'updates', bucketStart + BUCKET_MS),
    );
    expect(contact('kid@example.com', 'updates', NOW)).not.toBe(contact('kid@example.com', 'club', NOW));
  });

  it("are the row trigger's ids too: the page's call for a row stored a moment before it is a duplicate", async () => {
    const { enqueued, deps } = setup(NOW + 300);
    // What index-signup.ts enqueued for the row stored at NOW (its created_at bucket).
    await deps.enqueue(
      QUEUES.contact,
      { email: 'kid@example.com', subscription_type: 'updates', source: 'hero_form' },
      { id: id(QUEUES.contact, 'kid@example.com', 'updates', NOW) },
    );
    await handleAddContactToMailerlite({ email: 'kid@example.com', source: 'hero_form' }, deps);
    expect(enqueued).toHaveLength(1);
  });

  it('cannot be computed from the address without the secret, and carry no address', () => {
    const ours = id(QUEUES.contact, 'kid@example.com', 'updates', NOW);
    const otherSecret = deliveryTaskId('another-secret', QUEUES.contact, {
      mailboxKey: mailboxKey('another-secret', 'kid@example.com'),
      list: 'updates',
      at: NOW,
    });
    expect(ours).not.toBe(otherSecret);
    expect(ours).not.toMatch(/kid|example/i);
    expect(ours).toMatch(/^deliver-contact-\d+-[A-Za-z0-9_-]{43}$/);
  });
});

/** The id the callables and the row's trigger give one piece of work (tasks/queue.ts). */
function id(queue: (typeof QUEUES)[keyof typeof QUEUES], email: string, list: string, at: number): string {
  return deliveryTaskId(SECRET, queue, { mailboxKey: mailboxKey(SECRET, email), list, at });
}
