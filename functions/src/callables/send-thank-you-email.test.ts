import { performance } from 'node:perf_hooks';
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
import { THANK_YOU_MAILS } from '../contract';
import { sha256Hex } from '../logs';
import { type MailTransport, smtpTransport } from '../mail/transport';
import { ACCEPTED } from '../privacy/reply-floor';
import { openUnsubscribeToken, unsubscribeLink } from '../privacy/unsubscribe-token';
import {
  handleSendThankYouEmail,
  type SendThankYouDeps,
  THANK_YOU_LEASE_MS,
  THANK_YOU_TIMEOUT_SECONDS,
  type ThankYouOutcome,
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
  await firestore.reset();
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
    unsubscribeLink: (email) => unsubscribeLink(UNSUBSCRIBE_URL, SECRET, email),
    clock: systemClock,
    logger,
    replyFloorMs: 0,
    ...extra,
  };
}

const UNSUBSCRIBE_URL = 'http://127.0.0.1:5001/demo-goody/us-central1/unsubscribe';
const SECRET = 'test-unsubscribe-secret';

/** Calls, checks the reply is the one every call gets, and returns what really happened. */
async function outcomeOf(data: unknown, callDeps: SendThankYouDeps = deps()): Promise<ThankYouOutcome> {
  let outcome: ThankYouOutcome | undefined;
  const reply = await handleSendThankYouEmail(data, { ...callDeps, onOutcome: (seen) => (outcome = seen) });
  expect(reply).toEqual(ACCEPTED);
  if (!outcome) throw new Error('no outcome reported');
  return outcome;
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
    expect(await outcomeOf({ email: 'Kid@Example.com' })).toEqual({ status: 'sent' });

    const [message, ...others] = await outbox.messages();
    expect(others).toEqual([]);
    expect(message?.to).toEqual(['kid@example.com']);
    expect(message?.from).toContain('hello@goody.example');
    expect(message?.subject).toBe("You're on the GOODY list 🎉");
    expect(message?.text).toContain(
      "Didn't sign up, or want off the list? Unsubscribe in one click, which deletes this address from our list:",
    );
    expect(message?.text).toContain('Or reply to this e-mail or write to hello@goody.example');
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
    await outcomeOf({ email: 'kid@example.com' });
    expect((await outbox.messages())[0]?.subject).toBe('Welcome to the GOODY Club 🌟');
  });

  it('finds a sign-up stored in another case than the one sent', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    expect(await outcomeOf({ email: 'KID@example.com' })).toEqual({ status: 'sent' });
  });

  it('sends nothing the second time, for any spelling of the same address', async () => {
    await seedSignups(db, [
      { email: 'kid@example.com', ...HERO },
      { email: 'Kid@Example.com', ...FINAL },
    ]);
    await outcomeOf({ email: 'kid@example.com' });
    expect(await outcomeOf({ email: 'kid@example.com' })).toEqual({
      status: 'already_sent',
    });
    expect(await outcomeOf({ email: 'Kid@Example.com' })).toEqual({
      status: 'already_sent',
    });
    expect(await outbox.messages()).toHaveLength(1);
  });

  it('sends exactly one message when called several times at once', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    const results = await Promise.all(
      Array.from({ length: 6 }, () => outcomeOf({ email: 'kid@example.com' })),
    );
    expect(results.filter((result) => result.status === 'sent')).toHaveLength(1);
    expect(results.every((result) => ['sent', 'in_progress', 'already_sent'].includes(result.status))).toBe(
      true,
    );
    expect(await outbox.messages()).toHaveLength(1);
    expect((await record('kid@example.com'))?.state).toBe('sent');
  });

  it('sends and writes nothing for an address that never signed up, and answers the same', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    expect(await outcomeOf({ email: 'stranger@example.com' })).toEqual({ status: 'unknown_address' });
    expect(await outbox.messages()).toEqual([]);
    expect(await thankYouRecords()).toBe(0);
    expect(transportLoads).toBe(0);
    expect(logger.events()).toEqual(['thank_you.refused_unknown_address']);
  });

  describe('when SMTP fails', () => {
    it('refusing the message: failed, the record says failed, and a later call sends it', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      outbox.faults.rejectNext(1, 554);
      expect(await outcomeOf({ email: 'kid@example.com' })).toEqual({ status: 'failed' });
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

      expect(await outcomeOf({ email: 'kid@example.com' })).toEqual({ status: 'sent' });
      expect(await outbox.messages()).toHaveLength(1);
      expect(await record('kid@example.com')).toMatchObject({ state: 'sent', attempts: 2 });
    });

    it('refusing the recipient: failed, recorded as failed', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      outbox.faults.rejectNext(1, 550, undefined, 'rcpt');
      expect(await outcomeOf({ email: 'kid@example.com' })).toEqual({ status: 'failed' });
      expect((await record('kid@example.com'))?.state).toBe('failed');
      expect(await outbox.messages()).toEqual([]);
    });

    it('down: failed, recorded as failed, sent once it is back', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      await outbox.faults.setDown(true);
      expect(await outcomeOf({ email: 'kid@example.com' })).toEqual({ status: 'failed' });
      expect((await record('kid@example.com'))?.last_error).toMatch(/^ECONNECTION|^ESOCKET/);
      await outbox.faults.setDown(false);
      expect(await outcomeOf({ email: 'kid@example.com' })).toEqual({ status: 'sent' });
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
      expect(await outcomeOf({ email: 'kid@example.com' })).toEqual({
        status: 'in_progress',
      });
      expect(await outbox.messages()).toEqual([]);
    });

    it('is retried once its lease has expired, and sent once', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      void handleSendThankYouEmail({ email: 'kid@example.com' }, deps({ transport: async () => hanging }));
      await expect.poll(async () => (await record('kid@example.com'))?.state).toBe('sending');
      const later: Clock = clockAhead(THANK_YOU_LEASE_MS + 1_000);
      expect(await outcomeOf({ email: 'kid@example.com' }, deps({ clock: later }))).toEqual({
        status: 'sent',
      });
      expect(await outcomeOf({ email: 'kid@example.com' }, deps({ clock: later }))).toEqual({
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

  describe('the way out, and nothing told to strangers', () => {
    const unfold = (value: string | undefined) => (value ?? '').replace(/\r?\n(?=[ \t])/g, '');

    it('carries a one-click unsubscribe link (RFC 8058) that opens only to this address, shown nowhere in clear', async () => {
      await seedSignups(db, [{ email: 'Kid@Example.com', ...HERO }]);
      await outcomeOf({ email: 'Kid@Example.com' });
      const [message] = await outbox.messages();
      const header = unfold(message?.headers['list-unsubscribe']);
      const link = /^<(http[^>]+)>, <mailto:hello@goody\.example\?subject=unsubscribe>$/.exec(header)?.[1];
      expect(link, header).toBeDefined();
      expect(unfold(message?.headers['list-unsubscribe-post'])).toBe('List-Unsubscribe=One-Click');
      expect(message?.text).toContain(link);
      expect(message?.html).toContain(`href="${(link as string).replaceAll('&', '&amp;')}"`);
      const url = new URL(link as string);
      expect(`${url.origin}${url.pathname}`).toBe(UNSUBSCRIBE_URL);
      expect(decodeURIComponent(url.search)).not.toMatch(/@|example\.com/i);
      expect(openUnsubscribeToken(SECRET, url.searchParams.get('a'), url.searchParams.get('t'))).toEqual({
        emailAsTyped: 'Kid@Example.com',
        email: 'kid@example.com',
      });
      expect(
        openUnsubscribeToken('another-secret', url.searchParams.get('a'), url.searchParams.get('t')),
      ).toBe(null);
    });

    it('answers byte for byte the same in every state: stranger, sent, already sent, in progress, failed', async () => {
      await seedSignups(db, [
        { email: 'kid@example.com', ...HERO },
        { email: 'down@example.com', ...HERO },
      ]);
      const replies = new Map<string, string>();
      const reply = async (state: string, callDeps: SendThankYouDeps, email: string) =>
        replies.set(state, JSON.stringify(await handleSendThankYouEmail({ email }, callDeps)));
      await reply('stranger', deps(), 'stranger@example.com');
      await reply('sent', deps(), 'kid@example.com');
      await reply('already sent', deps(), 'kid@example.com');
      await outbox.faults.setDown(true);
      await reply('SMTP down', deps(), 'down@example.com');
      await outbox.faults.setDown(false);
      await reply('database down', { ...deps(), db: brokenDb() }, 'kid@example.com');
      expect([...replies.values()]).toEqual([...replies.keys()].map(() => '{"status":"accepted"}'));
      expect(await outbox.messages()).toHaveLength(1);
    });

    it('a stopwatch cannot tell a stranger from a stored address (the reply floor)', async () => {
      const stored = Array.from({ length: 20 }, (_, i) => `stored${i}@example.com`);
      await seedSignups(
        db,
        stored.map((email) => ({ email, ...HERO })),
      );
      // The real SMTP transport behind a 150 ms wait: a relay farther away than loopback, so that the
      // stored path is plainly slower than the stranger's unless the floor evens them out.
      const slowTransport = async (): Promise<MailTransport> => {
        const smtp = await smtpTransport(outbox.url);
        return {
          send: async (message) => {
            await sleep(150);
            return smtp.send(message);
          },
        };
      };
      const timed = async (email: string, floorMs: number) => {
        const started = performance.now();
        await outcomeOf({ email }, deps({ transport: slowTransport, replyFloorMs: floorMs }));
        return performance.now() - started;
      };
      const strangers: number[] = [];
      const known: number[] = [];
      const strangersWithout: number[] = [];
      for (const [i, email] of stored.entries()) {
        strangersWithout.push(await timed(`nobody${i}@example.com`, 0));
        strangers.push(await timed(`stranger${i}@example.com`, 400));
        known.push(await timed(email, 400));
      }
      expect(await outbox.messages()).toHaveLength(20);
      // The control: the stored path, whose floor this does not hide, is plainly slower than a
      // stranger without the floor.
      expect(median(known) - median(strangersWithout)).toBeGreaterThan(120);
      expect(
        Math.abs(median(known) - median(strangers)),
        `${median(known)} vs ${median(strangers)}`,
      ).toBeLessThan(50);
    }, 60_000);
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** A Firestore whose every query fails, as an unreachable database does. */
function brokenDb(): Firestore {
  return {
    collection: () => {
      throw Object.assign(new Error('unavailable'), { code: 14 });
    },
  } as unknown as Firestore;
}
