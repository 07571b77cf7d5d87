import type { Firestore } from 'firebase-admin/firestore';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SmtpOutbox } from '../../../dev/smtp/index.ts';
import {
  BAD_EMAILS,
  clockAhead,
  expectHttpsError,
  FINAL,
  type FirestoreHarness,
  HERO,
  type RecordingLogger,
  recordingLogger,
  seedSignups,
  startFirestore,
  startOutbox,
} from '../../test-support/stack';
import { type Clock, systemClock } from '../clock';
import { sha256Hex } from '../logs';
import { type MailTransport, smtpTransport } from '../mail/transport';
import {
  handleSendThankYouEmail,
  type SendThankYouDeps,
  THANK_YOU_LEASE_MS,
  THANK_YOU_MAILS,
  THANK_YOU_TIMEOUT_SECONDS,
  type ThankYouRecord,
} from './send-thank-you-email';

let firestore: FirestoreHarness;
let db: Firestore;
let outbox: SmtpOutbox;
let logger: RecordingLogger;
let transportLoads: number;

beforeAll(async () => {
  [firestore, outbox] = await Promise.all([startFirestore(), startOutbox()]);
  db = firestore.db;
});
afterAll(async () => {
  await Promise.all([firestore.stop(), outbox.stop()]);
});
beforeEach(async () => {
  firestore.standIn.reset();
  await outbox.faults.clear();
  await outbox.clear();
  logger = recordingLogger();
  transportLoads = 0;
});

const FROM = 'GOODY <hello@goody.example>';

function deps(extra: Partial<SendThankYouDeps> = {}): SendThankYouDeps {
  return {
    db,
    transport: () => {
      transportLoads += 1;
      return smtpTransport(outbox.url);
    },
    from: FROM,
    clock: systemClock,
    logger,
    ...extra,
  };
}

async function record(email: string): Promise<ThankYouRecord | undefined> {
  const snapshot = await db.collection(THANK_YOU_MAILS).doc(sha256Hex(email)).get();
  return snapshot.data() as ThankYouRecord | undefined;
}

async function thankYouRecords(): Promise<number> {
  return (await db.collection(THANK_YOU_MAILS).get()).size;
}

describe('send-thank-you-email', () => {
  it('sends one well-formed thank-you to an address that signed up', async () => {
    await seedSignups(db, [{ email: 'Kid@Example.com', ...HERO }]);
    expect(await handleSendThankYouEmail({ email: 'Kid@Example.com' }, deps())).toEqual({ status: 'sent' });

    const [message, ...others] = await outbox.messages();
    expect(others).toEqual([]);
    expect(message?.to).toEqual(['kid@example.com']);
    expect(message?.from).toContain('hello@goody.example');
    expect(message?.subject).toBe("You're on the GOODY list 🎉");
    expect(message?.text).toContain(
      "Didn't sign up, or want off the list? Reply to this e-mail or write to hello@goody.example",
    );
    expect(message?.html).toMatch(/^<!DOCTYPE html>\n<html lang="en">/);
    expect(message?.html).toContain('href="mailto:hello@goody.example"');
    const record_ = await record('kid@example.com');
    expect(record_).toMatchObject({
      state: 'sent',
      attempts: 1,
      subscription_type: 'updates',
      lease_expires_at: null,
    });
    expect(JSON.stringify(record_)).not.toContain('kid@example.com');
    expect(logger.events()).toEqual(['thank_you.sent']);
    expect(logger.text()).not.toMatch(/kid@example\.com/i);
  });

  it('greets a Join the Club sign-up as a Club member', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...FINAL }]);
    await handleSendThankYouEmail({ email: 'kid@example.com' }, deps());
    expect((await outbox.messages())[0]?.subject).toBe('Welcome to the GOODY Club 🌟');
  });

  it('finds a sign-up stored in another case than the one sent', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    expect(await handleSendThankYouEmail({ email: 'KID@example.com' }, deps())).toEqual({ status: 'sent' });
  });

  it('sends nothing the second time, for any spelling of the same address', async () => {
    await seedSignups(db, [
      { email: 'kid@example.com', ...HERO },
      { email: 'Kid@Example.com', ...FINAL },
    ]);
    await handleSendThankYouEmail({ email: 'kid@example.com' }, deps());
    expect(await handleSendThankYouEmail({ email: 'kid@example.com' }, deps())).toEqual({
      status: 'already_sent',
    });
    expect(await handleSendThankYouEmail({ email: 'Kid@Example.com' }, deps())).toEqual({
      status: 'already_sent',
    });
    expect(await outbox.messages()).toHaveLength(1);
  });

  it('sends exactly one message when called several times at once', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    const results = await Promise.all(
      Array.from({ length: 6 }, () => handleSendThankYouEmail({ email: 'kid@example.com' }, deps())),
    );
    expect(results.filter((result) => result.status === 'sent')).toHaveLength(1);
    expect(results.every((result) => ['sent', 'in_progress', 'already_sent'].includes(result.status))).toBe(
      true,
    );
    expect(await outbox.messages()).toHaveLength(1);
    expect((await record('kid@example.com'))?.state).toBe('sent');
  });

  it('refuses an address that never signed up, sending and writing nothing', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    const error = await expectHttpsError(
      handleSendThankYouEmail({ email: 'stranger@example.com' }, deps()),
      'not-found',
    );
    expect(error.message).toBe('No sign-up is stored for this address.');
    expect(await outbox.messages()).toEqual([]);
    expect(await thankYouRecords()).toBe(0);
    expect(transportLoads).toBe(0);
    expect(logger.events()).toEqual(['thank_you.refused_unknown_address']);
  });

  describe('when SMTP fails', () => {
    it('refusing the message: unavailable, the record says failed, and a later call sends it', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      outbox.faults.rejectNext(1, 554);
      const error = await expectHttpsError(
        handleSendThankYouEmail({ email: 'kid@example.com' }, deps()),
        'unavailable',
      );
      expect(error.message).toBe('The thank-you e-mail could not be sent right now. Please try again later.');
      expect(await outbox.messages()).toEqual([]);
      expect(await record('kid@example.com')).toMatchObject({
        state: 'failed',
        last_error: 'EMESSAGE 554',
        attempts: 1,
      });
      expect(logger.entries.at(-1)).toMatchObject({
        event: 'thank_you.failed',
        fields: { error: 'EMESSAGE 554' },
      });

      expect(await handleSendThankYouEmail({ email: 'kid@example.com' }, deps())).toEqual({ status: 'sent' });
      expect(await outbox.messages()).toHaveLength(1);
      expect(await record('kid@example.com')).toMatchObject({ state: 'sent', attempts: 2 });
    });

    it('refusing the recipient: unavailable, recorded as failed', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      outbox.faults.rejectNext(1, 550, undefined, 'rcpt');
      await expectHttpsError(handleSendThankYouEmail({ email: 'kid@example.com' }, deps()), 'unavailable');
      expect((await record('kid@example.com'))?.state).toBe('failed');
      expect(await outbox.messages()).toEqual([]);
    });

    it('down: unavailable, recorded as failed, sent once it is back', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      await outbox.faults.setDown(true);
      await expectHttpsError(handleSendThankYouEmail({ email: 'kid@example.com' }, deps()), 'unavailable');
      expect((await record('kid@example.com'))?.last_error).toMatch(/^ECONNECTION|^ESOCKET/);
      await outbox.faults.setDown(false);
      expect(await handleSendThankYouEmail({ email: 'kid@example.com' }, deps())).toEqual({ status: 'sent' });
      expect(await outbox.messages()).toHaveLength(1);
    });
  });

  describe('a send that crashed', () => {
    /** A transport that never answers: the call holding the claim "crashes" while sending. */
    const hanging: MailTransport = { send: () => new Promise(() => {}) };

    it('is not repeated while its lease runs', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      void handleSendThankYouEmail({ email: 'kid@example.com' }, deps({ transport: async () => hanging }));
      await expect.poll(async () => (await record('kid@example.com'))?.state).toBe('sending');
      expect(await handleSendThankYouEmail({ email: 'kid@example.com' }, deps())).toEqual({
        status: 'in_progress',
      });
      expect(await outbox.messages()).toEqual([]);
    });

    it('is retried once its lease has expired, and sent once', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      void handleSendThankYouEmail({ email: 'kid@example.com' }, deps({ transport: async () => hanging }));
      await expect.poll(async () => (await record('kid@example.com'))?.state).toBe('sending');
      const later: Clock = clockAhead(THANK_YOU_LEASE_MS + 1_000);
      expect(await handleSendThankYouEmail({ email: 'kid@example.com' }, deps({ clock: later }))).toEqual({
        status: 'sent',
      });
      expect(await handleSendThankYouEmail({ email: 'kid@example.com' }, deps({ clock: later }))).toEqual({
        status: 'already_sent',
      });
      expect(await outbox.messages()).toHaveLength(1);
      expect(await record('kid@example.com')).toMatchObject({ state: 'sent', attempts: 2 });
    });

    it('cannot be taken over while the function that claimed it may still run', () => {
      expect(THANK_YOU_LEASE_MS).toBeGreaterThan(THANK_YOU_TIMEOUT_SECONDS * 1000);
    });
  });

  describe('refuses bad input, writing and sending nothing', () => {
    it.each(BAD_EMAILS)('an email that is %s', async (_, email) => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      await expectHttpsError(handleSendThankYouEmail({ email }, deps()), 'invalid-argument');
      expect(logger.events()).toEqual(['input.rejected']);
      expect(await thankYouRecords()).toBe(0);
      expect(await outbox.messages()).toEqual([]);
      expect(transportLoads).toBe(0);
    });

    it.each<[string, unknown]>([
      ['no body', undefined],
      ['null', null],
      ['an array', [{ email: 'kid@example.com' }]],
      ['a string', 'kid@example.com'],
      ['no email', {}],
      ['an extra field', { email: 'kid@example.com', html: '<b>hi</b>' }],
    ])('%s', async (_, body) => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      await expectHttpsError(handleSendThankYouEmail(body, deps()), 'invalid-argument');
      expect(await thankYouRecords()).toBe(0);
      expect(await outbox.messages()).toEqual([]);
    });
  });
});
