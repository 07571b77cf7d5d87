import type { Firestore } from 'firebase-admin/firestore';
import { beforeEach, describe, expect, it } from 'vitest';
import { testBed } from '../../test-support/bed';
import { faultyFirestore, unavailable } from '../../test-support/faulty-firestore';
import { clockAhead } from '../../test-support/logs';
import { ONE_MAILBOX_SPELLINGS } from '../../test-support/mailboxes';
import {
  FINAL,
  HERO,
  MAILBOX_SECRET,
  seedSignups,
  suppressMailbox,
  taskFor,
  testMailboxes,
  UNSUBSCRIBE_SECRET,
} from '../../test-support/signups';
import { recordingEnqueue } from '../../test-support/tasks';
import { type Clock, systemClock } from '../clock';
import { THANK_YOU_MAILS } from '../contract';
import { DOMAIN_SHARE, DOMAIN_SHARE_MIN, MAIL_BUDGETS } from '../mail/budget';
import { type MailTransport, SmtpUrlError, smtpTransport } from '../mail/transport';
import { mailboxKey } from '../privacy/mailbox-key';
import { Mailboxes } from '../privacy/mailboxes';
import { openUnsubscribeToken, unsubscribeLink } from '../privacy/unsubscribe-token';
import {
  type DeliverThankYouDeps,
  handleDeliverThankYou,
  smtpRefusal,
  THANK_YOU_LEASE_MS,
  THANK_YOU_TIMEOUT_SECONDS,
  type ThankYouOutcome,
  type ThankYouRecord,
} from './deliver-thank-you';
import { enqueuePart } from './part-life';
import { RetryLater } from './queue';

const bed = testBed({ outbox: true });
const { db } = bed;
let transportLoads: number;
let queue: ReturnType<typeof recordingEnqueue>;

beforeEach(() => {
  transportLoads = 0;
  queue = recordingEnqueue();
});

const FROM = 'GOODY <hello@goody.example>';

function deps(extra: Partial<DeliverThankYouDeps> = {}): DeliverThankYouDeps {
  return {
    db,
    transport: () => {
      transportLoads += 1;
      return smtpTransport(bed.outbox.url);
    },
    from: FROM,
    unsubscribeLink: (email) => unsubscribeLink(UNSUBSCRIBE_URL, SECRET, email),
    clock: systemClock,
    logger: bed.logger,
    mailboxes: testMailboxes(db),
    mailPerHour: 1_000,
    enqueuePart: enqueuePart(queue.enqueue, MAILBOX_SECRET),
    ...extra,
  };
}

const UNSUBSCRIBE_URL = 'http://127.0.0.1:5001/demo-goody/us-central1/unsubscribe';
const SECRET = 'test-unsubscribe-secret';

/** Runs the task the row's trigger enqueues for the latest stored sign-up of this spelling. */
async function outcomeOf(
  body: { email: string },
  taskDeps: DeliverThankYouDeps = deps(),
): Promise<ThankYouOutcome> {
  return handleDeliverThankYou(await taskFor(db, body.email), taskDeps);
}

/** Runs the task of the round the latest row of this spelling is on (a later one once it waited for the budget). */
async function outcomeNow(email: string, taskDeps: DeliverThankYouDeps): Promise<ThankYouOutcome> {
  const task = await taskFor(db, email);
  const round = Number((await thankYouPart(email))?.round ?? 0);
  return handleDeliverThankYou({ ...task, round }, taskDeps);
}

async function record(email: string): Promise<ThankYouRecord | undefined> {
  const snapshot = await db.collection(THANK_YOU_MAILS).doc(mailboxKey(MAILBOX_SECRET, email)).get();
  return snapshot.data() as ThankYouRecord | undefined;
}

/** The thank-you part of the delivery state on the latest row of this spelling. */
async function thankYouPart(email: string) {
  const { signup } = await taskFor(db, email);
  return (await db.collection('email_subscriptions').doc(signup).get()).get('delivery.thank_you') as
    | Record<string, unknown>
    | undefined;
}

async function thankYouRecords(): Promise<number> {
  return (await db.collection(THANK_YOU_MAILS).get()).size;
}

describe('deliver-thank-you (the task send-thank-you-email enqueues)', () => {
  it('sends one well-formed thank-you to an address that signed up', async () => {
    await seedSignups(db, [{ email: 'Kid@Example.com', ...HERO }]);
    expect(await outcomeOf({ email: 'Kid@Example.com' })).toBe('delivered');

    const [message, ...others] = await bed.outbox.messages();
    expect(others).toEqual([]);
    // The spelling the person typed, as stored.
    expect(message?.to).toEqual(['Kid@example.com']);
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
    expect(bed.logger.events()).toEqual(['thank_you.sent']);
    expect(bed.logger.text()).not.toMatch(/kid@example\.com/i);
  });

  it('greets a Join the Club sign-up as a Club member', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...FINAL }]);
    await outcomeOf({ email: 'kid@example.com' });
    expect((await bed.outbox.messages())[0]?.subject).toBe('Welcome to the GOODY Club 🌟');
  });

  it('writes the delivery state on the row: done, one attempt, no due time; no address in it', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    expect(await outcomeOf({ email: 'kid@example.com' })).toBe('delivered');
    const part = await thankYouPart('kid@example.com');
    expect(part).toMatchObject({ state: 'done', attempts: 1, round: 0 });
    expect(part).not.toHaveProperty('due_at');
    // A task of an earlier round that ran late costs the read.
    expect(await outcomeOf({ email: 'kid@example.com' })).toBe('settled');
    expect(await bed.outbox.messages()).toHaveLength(1);
  });

  it('sends nothing the second time, for any spelling of the same address', async () => {
    await seedSignups(db, [
      { email: 'kid@example.com', ...HERO },
      { email: 'Kid@Example.com', ...FINAL },
    ]);
    await outcomeOf({ email: 'kid@example.com' });
    expect(await outcomeOf({ email: 'Kid@Example.com' })).toBe('already_thanked');
    expect(await bed.outbox.messages()).toHaveLength(1);
    expect(await thankYouPart('Kid@Example.com')).toMatchObject({
      state: 'skipped',
      reason: 'already_thanked',
    });
  });

  it('sends one message to a Gmail mailbox signed up under twelve spellings (dots, +tags, googlemail.com, case)', async () => {
    const spellings = ONE_MAILBOX_SPELLINGS;
    await seedSignups(
      db,
      spellings.map((email) => ({ email, ...HERO })),
    );
    const outcomes = [];
    for (const email of spellings) outcomes.push(await outcomeOf({ email }));
    expect(outcomes).toEqual(['delivered', ...Array.from({ length: 11 }, () => 'already_thanked')]);
    expect(await bed.outbox.messages()).toHaveLength(1);
    expect(await thankYouRecords()).toBe(1);
    // A different mailbox at a provider that does not fold dots is another person.
    await seedSignups(db, [{ email: 'kid.teen@example.com', ...HERO }]);
    expect(await outcomeOf({ email: 'kid.teen@example.com' })).toBe('delivered');
  });

  describe("a person's own address: the bare spelling after a +tag one", () => {
    it('thanks the bare spelling once more after a +tag one was thanked, under a Message-ID of its own; no third mail', async () => {
      const spellings = [
        'kid+x@school-example.org',
        'Kid@School-Example.org',
        'kid+y@school-example.org',
        'kid@school-example.org',
      ];
      await seedSignups(
        db,
        spellings.map((email) => ({ email, ...HERO })),
      );
      const outcomes = [];
      for (const email of spellings) outcomes.push(await outcomeOf({ email }));
      expect(outcomes).toEqual(['delivered', 'delivered', 'already_thanked', 'already_thanked']);
      const messages = await bed.outbox.messages();
      expect(messages.map((message) => message.to)).toEqual([
        ['kid+x@school-example.org'],
        ['Kid@school-example.org'],
      ]);
      expect(new Set(messages.map((message) => message.messageId)).size).toBe(2);
      expect(await record('kid@school-example.org')).toMatchObject({
        state: 'sent',
        spelling: 'bare',
        tagged_thanked: true,
      });
      expect(await thankYouPart('Kid@School-Example.org')).toMatchObject({ state: 'done' });
      expect(await thankYouPart('kid+y@school-example.org')).toMatchObject({
        state: 'skipped',
        reason: 'already_thanked',
      });
      expect(await thankYouRecords()).toBe(1);
    });

    /** Thanks kid+x@ and loses its part's save (the database failed after the relay accepted): its round runs again. */
    async function thankTaggedUnsaved(taskDeps = deps()): Promise<{ signup: string }> {
      await seedSignups(db, [{ email: 'kid+x@school-example.org', ...HERO }]);
      expect(await outcomeOf({ email: 'kid+x@school-example.org' }, taskDeps)).toBe('delivered');
      const tagged = await taskFor(db, 'kid+x@school-example.org');
      await db
        .collection('email_subscriptions')
        .doc(tagged.signup)
        .update({ 'delivery.thank_you.state': 'pending', 'delivery.thank_you.round': 0 });
      return tagged;
    }

    it("a +tag row whose 'done' was not saved is still its own row's thanks once the bare spelling was thanked after it", async () => {
      await thankTaggedUnsaved();
      await seedSignups(db, [{ email: 'kid@school-example.org', ...HERO }]);
      expect(await outcomeOf({ email: 'kid@school-example.org' })).toBe('delivered');
      expect(await outcomeOf({ email: 'kid+x@school-example.org' })).toBe('already_delivered');
      expect(await thankYouPart('kid+x@school-example.org')).toMatchObject({ state: 'done' });
      expect(await bed.outbox.messages()).toHaveLength(2);
    });

    it("a +tag row whose 'done' was not saved is still its own row's thanks while the bare spelling waits for the budget", async () => {
      const HOUR = 60 * 60_000;
      const start = Math.floor(Date.now() / HOUR) * HOUR + 10 * 60_000;
      const inHour = deps({ mailPerHour: 1, clock: clockAhead(start - Date.now()) });
      const tagged = await thankTaggedUnsaved(inHour);
      // The bare spelling claims the record, then gives it back to wait for the next hour's slot.
      await seedSignups(db, [{ email: 'kid@school-example.org', ...HERO }]);
      expect(await outcomeOf({ email: 'kid@school-example.org' }, inHour)).toMatchObject({
        waiting: expect.any(Number),
      });
      expect(await record('kid@school-example.org')).toMatchObject({
        state: 'waiting',
        tagged_signup: tagged.signup,
      });
      expect(await outcomeOf({ email: 'kid+x@school-example.org' }, inHour)).toBe('already_delivered');
      expect(await thankYouPart('kid+x@school-example.org')).toMatchObject({ state: 'done' });
      expect(await bed.outbox.messages()).toHaveLength(1);
    });

    it('sends no +tag spelling anything once the bare one was thanked first', async () => {
      await seedSignups(db, [
        { email: 'kid@school-example.org', ...HERO },
        { email: 'kid+x@school-example.org', ...HERO },
      ]);
      expect(await outcomeOf({ email: 'kid@school-example.org' })).toBe('delivered');
      expect(await outcomeOf({ email: 'kid+x@school-example.org' })).toBe('already_thanked');
      expect(await record('kid@school-example.org')).toMatchObject({ spelling: 'bare' });
      expect(await record('kid@school-example.org')).not.toHaveProperty('tagged_thanked');
      expect(await bed.outbox.messages()).toHaveLength(1);
    });

    it('a bare spelling stored while the +tag one waits for the budget is the only one thanked, on the slot the mailbox booked', async () => {
      await seedSignups(db, [
        { email: 'first@example.com', ...HERO },
        { email: 'kid+x@school-example.org', ...HERO },
        { email: 'kid@school-example.org', ...HERO },
      ]);
      const HOUR = 60 * 60_000;
      const start = Math.floor(Date.now() / HOUR) * HOUR + 10 * 60_000;
      const hour = (n: number) => deps({ mailPerHour: 1, clock: clockAhead(start + n * HOUR - Date.now()) });
      expect(await outcomeOf({ email: 'first@example.com' }, hour(0))).toBe('delivered');
      expect(await outcomeOf({ email: 'kid+x@school-example.org' }, hour(0))).toMatchObject({
        waiting: expect.any(Number),
      });
      // In the next hour the bare one's task comes first: it sends on the slot the mailbox booked.
      expect(await outcomeOf({ email: 'kid@school-example.org' }, hour(1))).toBe('delivered');
      expect(await outcomeNow('kid+x@school-example.org', hour(1))).toBe('already_thanked');
      expect((await bed.outbox.messages()).map((message) => message.to)).toEqual([
        ['first@example.com'],
        ['kid@school-example.org'],
      ]);
    });

    it('a bare spelling refused once by the relay after a +tag one was thanked: the +tag spellings still get nothing', async () => {
      await seedSignups(db, [
        { email: 'kid+x@school-example.org', ...HERO },
        { email: 'kid@school-example.org', ...HERO },
        { email: 'kid+y@school-example.org', ...HERO },
      ]);
      expect(await outcomeOf({ email: 'kid+x@school-example.org' })).toBe('delivered');
      bed.outbox.faults.rejectNext(1, 451, '4.3.0 Try again later', 'rcpt');
      await expect(outcomeOf({ email: 'kid@school-example.org' })).rejects.toBeInstanceOf(RetryLater);
      expect(await outcomeOf({ email: 'kid+y@school-example.org' })).toBe('already_thanked');
      expect(await outcomeOf({ email: 'kid@school-example.org' })).toBe('delivered');
      expect((await bed.outbox.messages()).map((message) => message.to)).toEqual([
        ['kid+x@school-example.org'],
        ['kid@school-example.org'],
      ]);
    });
  });

  it.each(['kid+1@school-example.org', 'kid+goody@school-example.org'])(
    'sends nothing to a school mailbox that unsubscribed, signed up again as %s (a +tag on a domain no list names)',
    async (again) => {
      await suppressMailbox(db, 'kid@school-example.org');
      await seedSignups(db, [{ email: again, ...HERO }]);
      expect(await outcomeOf({ email: again })).toBe('suppressed');
      expect(await bed.outbox.messages()).toEqual([]);
    },
  );

  it('sends nothing to a mailbox on the suppression list, whoever signs it up again', async () => {
    await suppressMailbox(db, 'kidteen@gmail.com');
    await seedSignups(db, [{ email: 'Kid.Teen+again@googlemail.com', ...HERO }]);
    expect(await outcomeOf({ email: 'Kid.Teen+again@googlemail.com' })).toBe('suppressed');
    expect(await bed.outbox.messages()).toEqual([]);
    expect(await thankYouRecords()).toBe(0);
    expect(transportLoads).toBe(0);
    expect(bed.logger.entries.at(-1)).toMatchObject({
      event: 'thank_you.skipped',
      fields: { reason: 'suppressed' },
    });
  });

  describe('the mail budget', () => {
    const HOUR = 60 * 60_000;
    // Ten minutes into an hour, so the hour does not end during the test.
    const at = (hours: number) => {
      const start = Math.floor(Date.now() / HOUR) * HOUR + 10 * 60_000;
      return clockAhead(start + hours * HOUR - Date.now());
    };
    const hourOf = (clock: Clock) => Math.floor(clock.now() / HOUR);
    /** A relay that accepts each mail and whose reply never arrives. */
    const replyLostTransport = (): MailTransport => ({
      send: async (message) => {
        await (await smtpTransport(bed.outbox.url)).send(message);
        throw Object.assign(new Error('Timeout'), { code: 'ETIMEDOUT' });
      },
    });
    const attempt = (email: string, budget: Partial<DeliverThankYouDeps>) =>
      outcomeNow(email, deps(budget)).then(
        (outcome) => (typeof outcome === 'string' ? outcome : 'waiting'),
        (error: Error) => error.name,
      );

    it('sends at most MAIL_PER_HOUR an hour; the rest book a later hour and their next round runs then, none dropped', async () => {
      const addresses = Array.from({ length: 5 }, (_, i) => `new${i}@example.com`);
      await seedSignups(
        db,
        addresses.map((email) => ({ email, ...HERO })),
      );
      const budget = { mailPerHour: 3, clock: at(0) };
      const outcomes: string[] = [];
      for (const email of addresses) outcomes.push(await attempt(email, budget));
      expect(outcomes).toEqual(['delivered', 'delivered', 'delivered', 'waiting', 'waiting']);
      expect(await bed.outbox.messages()).toHaveLength(3);
      // Said once for the hour, however many tasks it holds back.
      expect(bed.logger.events().filter((event) => event === 'thank_you.budget_reached')).toHaveLength(1);
      expect(
        bed.logger.entries.find((entry) => entry.event === 'thank_you.budget_reached')?.fields,
      ).toMatchObject({ per_hour: 3 });

      // Not a retry spent: each one's next round is enqueued to run at the start of the hour it booked, and
      // its part waits on that round with a due time (its net).
      const next = hourOf(at(1));
      expect(queue.tasks.map((task) => [task.payload, task.notBefore])).toEqual([
        [{ signup: (await taskFor(db, addresses[3] as string)).signup, round: 1 }, next * HOUR],
        [{ signup: (await taskFor(db, addresses[4] as string)).signup, round: 1 }, next * HOUR],
      ]);
      for (const email of addresses.slice(3)) {
        expect(await thankYouPart(email)).toMatchObject({
          state: 'pending',
          reason: 'mail_budget',
          round: 1,
          due_at: expect.anything(),
        });
        expect(await record(email)).toMatchObject({ state: 'waiting', slot: next });
      }
      // In that hour they send, on their slots: the hour's own sign-ups have what is left.
      for (const task of queue.tasks) {
        expect(await handleDeliverThankYou(task.payload, deps({ mailPerHour: 3, clock: at(1) }))).toBe(
          'delivered',
        );
      }
      expect(await bed.outbox.messages()).toHaveLength(5);
      expect(await thankYouPart(addresses[4] as string)).toMatchObject({ state: 'done', round: 1 });
      expect(await record(addresses[4] as string)).toMatchObject({ state: 'sent', slot: null });
      await seedSignups(db, [{ email: 'hour-one@example.com', ...HERO }]);
      expect(await attempt('hour-one@example.com', { mailPerHour: 3, clock: at(1) })).toBe('delivered');
      await seedSignups(db, [{ email: 'hour-one-more@example.com', ...HERO }]);
      expect(await attempt('hour-one-more@example.com', { mailPerHour: 3, clock: at(1) })).toBe('waiting');
    });

    it('a slot is honoured only in its own hour: a send after it (the relay refusing our sender through it) takes a slot of the hour it sends in', async () => {
      await seedSignups(
        db,
        ['a@example.com', 'b@example.com'].map((email) => ({ email, ...HERO })),
      );
      bed.outbox.faults.refuse([
        { stage: 'mail', code: 554, message: '5.7.1 Email address is not verified' },
      ]);
      const hour = (n: number) => ({ mailPerHour: 1, clock: at(n) });
      // Hour 0: a books the hour's one slot and is refused; b books hour 1.
      expect(await attempt('a@example.com', hour(0))).toBe('RetryLater');
      expect(await attempt('b@example.com', hour(0))).toBe('waiting');
      // a's retries within hour 0 send on its slot: no second one is booked.
      expect(await attempt('a@example.com', hour(0))).toBe('RetryLater');
      expect(await record('a@example.com')).toMatchObject({ state: 'failed', slot: hourOf(at(0)) });
      // Hour 1: b's round runs on its slot, refused too.
      const [bTask] = queue.tasks;
      await expect(handleDeliverThankYou(bTask?.payload, deps(hour(1)))).rejects.toBeInstanceOf(RetryLater);
      // Hour 2, the relay fixed: a's retry takes hour 2's slot; b's retry, later, books hour 3.
      bed.outbox.faults.refuse([]);
      expect(await attempt('a@example.com', hour(2))).toBe('delivered');
      await expect(handleDeliverThankYou(bTask?.payload, deps(hour(2)))).resolves.toEqual({
        waiting: hourOf(at(3)),
      });
      expect(await bed.outbox.messages()).toHaveLength(1);
      const bNext = queue.tasks[1];
      expect(bNext?.payload).toMatchObject({ round: 2 });
      expect(await handleDeliverThankYou(bNext?.payload, deps(hour(3)))).toBe('delivered');
      expect(await bed.outbox.messages()).toHaveLength(2);
    });

    it("sends only when the send can end in its slot's hour: a task in the hour's last seconds books the next, and one whose booking and reads take the rest of the hour sends on its retry, in the next", async () => {
      await seedSignups(
        db,
        ['late@example.com', 'slow@example.com'].map((email) => ({ email, ...HERO })),
      );
      /** 30 s before hour `hours` (from now) ends. */
      const lastSeconds = (hours: number) =>
        clockAhead((Math.floor(Date.now() / HOUR) + hours + 1) * HOUR - 30_000 - Date.now());
      const next = hourOf(at(1));

      expect(await attempt('late@example.com', { mailPerHour: 3, clock: lastSeconds(0) })).toBe('waiting');
      expect(queue.tasks.map((task) => task.notBefore)).toEqual([next * HOUR]);

      // slow@ books a slot of hour 0 ten minutes in; its read after the booking returns in the hour's last seconds.
      let offset = at(0).now() - Date.now();
      const moving: Clock = { now: () => Date.now() + offset, sleep: systemClock.sleep };
      const mailboxes = testMailboxes(db);
      const among = mailboxes.suppression.among.bind(mailboxes.suppression);
      let reads = 0;
      mailboxes.suppression.among = async (emails) => {
        const found = await among(emails);
        reads += 1;
        if (reads === 2) offset = lastSeconds(0).now() - Date.now();
        return found;
      };
      expect(await attempt('slow@example.com', { mailPerHour: 3, clock: moving, mailboxes })).toBe(
        'RetryLater',
      );
      expect(await bed.outbox.messages()).toEqual([]);
      expect(await record('slow@example.com')).toMatchObject({ state: 'waiting' });
      expect(await thankYouPart('slow@example.com')).toMatchObject({
        state: 'pending',
        last_error: 'budget_hour_ended',
      });
      // Its retry, in the next hour, books a slot of that hour and sends.
      expect(await attempt('slow@example.com', { mailPerHour: 3, clock: at(1) })).toBe('delivered');
      expect(await bed.outbox.messages()).toHaveLength(1);
    });

    it("a send whose reply was lost keeps its slot and its Message-ID for its own resend; another spelling's mail books a slot of its own", async () => {
      await seedSignups(
        db,
        ['kid@school-example.org', 'kid+x@school-example.org'].map((email) => ({ email, ...HERO })),
      );
      // The relay accepts the bare spelling's mail, and its reply never arrives: the worker cannot tell it left.
      const replyLost = replyLostTransport();
      const hour0 = { mailPerHour: 2, clock: at(0) };
      expect(await attempt('kid@school-example.org', { ...hour0, transport: async () => replyLost })).toBe(
        'RetryLater',
      );
      expect(await record('kid@school-example.org')).toMatchObject({ state: 'failed', slot: hourOf(at(0)) });
      // The +tag spelling's task comes next: a message of its own, on the hour's other slot, not the bare one's.
      expect(await attempt('kid+x@school-example.org', hour0)).toBe('delivered');
      // The budget is spent: the bare one's resend waits for the next hour, and carries its first Message-ID.
      expect(await attempt('kid@school-example.org', hour0)).toBe('waiting');
      expect(await attempt('kid@school-example.org', { mailPerHour: 2, clock: at(1) })).toBe('delivered');
      const messages = await bed.outbox.messages();
      expect(messages.map((message) => message.to[0])).toEqual([
        'kid@school-example.org',
        'kid+x@school-example.org',
        'kid@school-example.org',
      ]);
      const [first, tagged, resent] = messages.map((message) => message.messageId);
      expect(resent).toBe(first);
      expect(tagged).not.toBe(first);
    });

    it("a slot a send was tried on stays its spelling's after a retry gave it back unsent: another spelling books its own (simulation seed 567000018)", async () => {
      await seedSignups(
        db,
        ['kid@school-example.org', 'kid+x@school-example.org'].map((email) => ({ email, ...HERO })),
      );
      const replyLost = replyLostTransport();
      const hour0 = { mailPerHour: 2, clock: at(0) };
      expect(await attempt('kid@school-example.org', { ...hour0, transport: async () => replyLost })).toBe(
        'RetryLater',
      );
      // The bare spelling's retry claims the slot and gives it back unsent: the suppression list did not answer.
      const mailboxes = testMailboxes(db);
      const among = mailboxes.suppression.among.bind(mailboxes.suppression);
      let looks = 0;
      mailboxes.suppression.among = async (...args) => {
        looks += 1;
        if (looks === 2) throw unavailable();
        return among(...args);
      };
      expect(await attempt('kid@school-example.org', { ...hour0, mailboxes })).toBe('RetryLater');
      expect(await record('kid@school-example.org')).toMatchObject({ state: 'failed', slot: hourOf(at(0)) });
      // The +tag spelling's mail is a message of its own: the hour's other slot, not the one the bare mail took.
      expect(await attempt('kid+x@school-example.org', hour0)).toBe('delivered');
      const slots = (await db.collection(MAIL_BUDGETS).get()).docs.filter(
        (doc) => doc.get('pool') === String(hourOf(at(0))),
      );
      expect(slots).toHaveLength(2);
      expect((await bed.outbox.messages()).map((message) => message.to[0])).toEqual([
        'kid@school-example.org',
        'kid+x@school-example.org',
      ]);
    });

    it('a sign-up waits only behind those who booked before it: a task run before its hour books nothing more', async () => {
      const people = ['first@example.com', 'older@example.com', 'newer@example.com'];
      await seedSignups(
        db,
        people.map((email) => ({ email, ...HERO })),
      );
      const full = { mailPerHour: 1, clock: at(0) };
      expect(await attempt('first@example.com', full)).toBe('delivered');
      expect(await attempt('older@example.com', full)).toBe('waiting');
      expect(await attempt('newer@example.com', full)).toBe('waiting');
      expect(await record('older@example.com')).toMatchObject({ slot: hourOf(at(1)) });
      expect(await record('newer@example.com')).toMatchObject({ slot: hourOf(at(2)) });
      // In hour 1 the newer one's task runs early (delivered again, or re-driven): it keeps its hour, spends
      // nothing, and the older one sends.
      const next = { mailPerHour: 1, clock: at(1) };
      expect(await attempt('newer@example.com', next)).toBe('waiting');
      expect(await record('newer@example.com')).toMatchObject({ slot: hourOf(at(2)) });
      expect(await attempt('older@example.com', next)).toBe('delivered');
      expect((await bed.outbox.messages()).map((message) => message.to[0])).toEqual([
        'first@example.com',
        'older@example.com',
      ]);
      // A fresh sign-up in hour 1 books after them.
      await seedSignups(db, [{ email: 'fresh@example.com', ...HERO }]);
      expect(await attempt('fresh@example.com', next)).toBe('waiting');
      expect(await record('fresh@example.com')).toMatchObject({ slot: hourOf(at(3)) });
    });

    it('a round waits for an hour only on a slot its mailbox record holds: a give-back the database refuses enqueues nothing, and the retry books and waits (simulation seed 567100918)', async () => {
      await seedSignups(
        db,
        ['first@example.com', 'later@example.com'].map((email) => ({ email, ...HERO })),
      );
      expect(await attempt('first@example.com', { mailPerHour: 1, clock: at(0) })).toBe('delivered');
      // The record's give-back after the booking does not answer: no round is enqueued for a slot nobody holds.
      let refusals = 0;
      const refusing = faultyFirestore(db, (call, path) => {
        if (call !== 'update' || !path.startsWith(`${THANK_YOU_MAILS}/`) || refusals > 0) return undefined;
        refusals += 1;
        return unavailable();
      });
      // The claim of a new record is a create, so the update refused is the give-back.
      expect(await attempt('later@example.com', { mailPerHour: 1, clock: at(0), db: refusing })).toBe(
        'RetryLater',
      );
      expect(refusals).toBe(1);
      expect(queue.tasks).toEqual([]);
      expect(await thankYouPart('later@example.com')).toMatchObject({
        state: 'pending',
        last_error: 'database',
      });
      // The retry, once the claim's lease ran out, books again and waits on the slot its record holds.
      const retry = clockAhead(at(0).now() + THANK_YOU_LEASE_MS + 1_000 - Date.now());
      expect(await attempt('later@example.com', { mailPerHour: 1, clock: retry })).toBe('waiting');
      const slot = (await record('later@example.com'))?.slot;
      expect(await record('later@example.com')).toMatchObject({ state: 'waiting' });
      expect(queue.tasks.map((task) => task.notBefore)).toEqual([Number(slot) * HOUR]);
      expect(await thankYouPart('later@example.com')).toMatchObject({ reason: 'mail_budget', round: 1 });
    });

    it('a burst of 20 spellings of one mailbox spends one slot: only the claim holder takes one', async () => {
      const spellings = Array.from({ length: 20 }, (_, i) => `kid+${i}@school-example.org`);
      await seedSignups(
        db,
        spellings.map((email) => ({ email, ...HERO })),
      );
      const budget = { mailPerHour: 2, clock: at(0) };
      const results = await Promise.allSettled(spellings.map((email) => outcomeOf({ email }, deps(budget))));
      const outcomes = results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).name));
      expect(outcomes.filter((o) => o === 'delivered')).toHaveLength(1);
      expect(await bed.outbox.messages()).toHaveLength(1);
      // The hour's second slot is still there for someone else.
      await seedSignups(db, [{ email: 'friend@example.com', ...HERO }]);
      expect(await outcomeOf({ email: 'friend@example.com' }, deps(budget))).toBe('delivered');
    });

    it("a catch-all domain's burst takes at most its share of the hour: a real sign-up still gets its thank-you", async () => {
      const share = Math.max(DOMAIN_SHARE_MIN, Math.ceil(100 * DOMAIN_SHARE));
      const bots = Array.from({ length: share + 5 }, (_, i) => `bot${i}@catch-all-example.net`);
      await seedSignups(
        db,
        [...bots, 'kid@school-example.org'].map((email) => ({ email, ...HERO })),
      );
      const budget = { mailPerHour: 100, clock: at(0) };
      const outcomes: string[] = [];
      for (const email of bots) {
        outcomes.push(
          await outcomeOf({ email }, deps(budget)).then(
            (o) => (typeof o === 'string' ? o : 'waiting'),
            (e: Error) => e.name,
          ),
        );
      }
      expect(outcomes.filter((o) => o === 'delivered')).toHaveLength(share);
      expect(outcomes.filter((o) => o === 'waiting')).toHaveLength(5);
      expect(await outcomeOf({ email: 'kid@school-example.org' }, deps(budget))).toBe('delivered');
      // The held-back ones are not dropped: the next hour sends them.
      const later = { mailPerHour: 100, clock: at(1) };
      for (const email of bots.slice(share)) {
        expect(await outcomeNow(email, deps(later))).toBe('delivered');
      }
    });

    it('spends none of it on a mailbox already thanked', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      // A budget of two: the first mail takes one slot, and a second booking would take the hour's last.
      const budget = { mailPerHour: 2, clock: at(0) };
      expect(await outcomeOf({ email: 'kid@example.com' }, deps(budget))).toBe('delivered');
      for (let i = 0; i < 3; i += 1) {
        await seedSignups(db, [{ email: 'Kid@Example.com', ...HERO }]);
        expect(await outcomeOf({ email: 'Kid@Example.com' }, deps(budget))).toBe('already_thanked');
      }
      expect(bed.logger.events()).not.toContain('thank_you.budget_reached');
    });
  });

  it('sends exactly one message when called several times at once', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, () => outcomeOf({ email: 'kid@example.com' })),
    );
    const outcomes = results.map((result) =>
      result.status === 'fulfilled' ? result.value : (result.reason as Error).name,
    );
    expect(outcomes.filter((outcome) => outcome === 'delivered')).toHaveLength(1);
    // The others found it sent, or its claim held (then Cloud Tasks retries them, and they find it sent).
    expect(
      outcomes.every((outcome) =>
        ['delivered', 'already_delivered', 'RetryLater'].includes(outcome as string),
      ),
    ).toBe(true);
    expect(await bed.outbox.messages()).toHaveLength(1);
    expect((await record('kid@example.com'))?.state).toBe('sent');
    // They were all this row's (a re-driven round beside the first): the row is done, not "already thanked".
    for (let retry = 0; retry < 6; retry += 1) {
      await outcomeOf({ email: 'kid@example.com' }).catch(() => undefined);
    }
    expect(await thankYouPart('kid@example.com')).toMatchObject({ state: 'done' });
  });

  it('a task of a past round does nothing: no mail, no claim, no write', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    const { signup } = await taskFor(db, 'kid@example.com');
    const ref = db.collection('email_subscriptions').doc(signup);
    await ref.update({ 'delivery.thank_you.round': 2 });
    const before = (await ref.get()).get('delivery.thank_you');
    expect(await handleDeliverThankYou({ signup, round: 1 }, deps())).toBe('stale');
    expect(await bed.outbox.messages()).toEqual([]);
    expect(await thankYouRecords()).toBe(0);
    expect((await ref.get()).get('delivery.thank_you')).toEqual(before);
    // The round the part is on sends it.
    expect(await handleDeliverThankYou({ signup, round: 2 }, deps())).toBe('delivered');
  });

  it('sends and writes nothing for a task whose row does not exist', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    expect(await handleDeliverThankYou({ signup: 'not-a-stored-row', round: 0 }, deps())).toBe('gone');
    expect(await bed.outbox.messages()).toEqual([]);
    expect(await thankYouRecords()).toBe(0);
    expect(transportLoads).toBe(0);
    expect(bed.logger.events()).toEqual(['thank_you.signup_gone']);
  });

  describe('when SMTP fails', () => {
    it("refusing the recipient for good (550 5.1.1 at RCPT): the person's own mailbox, the part skipped `refused`, no retry", async () => {
      await seedSignups(db, [
        { email: 'gone@example.com', ...HERO },
        { email: 'kid@example.com', ...HERO },
      ]);
      bed.outbox.faults.rejectNext(1, 550, '5.1.1 Mailbox unavailable', 'rcpt');
      expect(await outcomeOf({ email: 'gone@example.com' })).toBe('refused');
      expect(await record('gone@example.com')).toMatchObject({
        state: 'failed',
        last_error: 'EENVELOPE 550',
      });
      expect(await thankYouPart('gone@example.com')).toMatchObject({
        state: 'skipped',
        reason: 'refused',
        attempts: 1,
      });
      expect(await outcomeOf({ email: 'gone@example.com' })).toBe('settled');
      // The others are not affected.
      expect(await outcomeOf({ email: 'kid@example.com' })).toBe('delivered');
      expect((await bed.outbox.messages()).map((message) => message.to)).toEqual([['kid@example.com']]);
      expect(bed.logger.text()).not.toMatch(/gone@example\.com/i);
    });

    it('refusing our sender (554 5.7.1 at MAIL FROM, a domain not verified yet) while three sign up: each waits, `configuration`, and is thanked once after the fix', async () => {
      const people = ['a@example.com', 'b@example.com', 'c@example.com'];
      await seedSignups(
        db,
        people.map((email) => ({ email, ...HERO })),
      );
      bed.outbox.faults.rejectNext(3, 554, '5.7.1 Message rejected: Email address is not verified', 'mail');
      for (const email of people) {
        const refused = await outcomeOf({ email }).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(RetryLater);
        expect(refused).toMatchObject({ code: 'smtp EENVELOPE 554', wait: 'configuration' });
        expect(await thankYouPart(email)).toMatchObject({
          state: 'pending',
          reason: 'configuration',
          last_error: 'smtp EENVELOPE 554',
          attempts: 1,
        });
      }
      expect(bed.logger.entries.at(-1)).toMatchObject({
        event: 'thank_you.failed',
        fields: { error: 'EENVELOPE 554', retry: true, reason: 'configuration' },
      });
      // Fixed: Cloud Tasks' next retry of each sends it, once.
      for (const email of people) expect(await outcomeOf({ email })).toBe('delivered');
      for (const email of people) expect(await outcomeOf({ email })).toBe('settled');
      expect(await bed.outbox.messages()).toHaveLength(3);
      for (const email of people) expect(await thankYouPart(email)).toMatchObject({ state: 'done' });
    });

    it('an SMTP_URL without credentials (530 5.7.0 at MAIL FROM): our setup, the part waits', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      bed.outbox.faults.rejectNext(1, 530, '5.7.0 Authentication required', 'mail');
      await expect(outcomeOf({ email: 'kid@example.com' })).rejects.toMatchObject({ wait: 'configuration' });
      expect(await thankYouPart('kid@example.com')).toMatchObject({
        state: 'pending',
        reason: 'configuration',
        last_error: 'smtp EENVELOPE 530',
      });
      expect(await outcomeOf({ email: 'kid@example.com' })).toBe('delivered');
    });

    it.each([
      ['550 5.1.0', '5.1.0 Sender address rejected'],
      ['550 5.1.7', '5.1.7 Bad sender address syntax'],
      ['553 5.1.8', '5.1.8 Sender address domain does not exist'],
      ['550 5.7.26', '5.7.26 Unauthenticated email from this domain is not accepted'],
    ])(
      'our sender refused at RCPT (%s): our setup, the part waits, `configuration`, and is thanked once after the fix',
      async (reply, message) => {
        await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
        const code = Number(reply.slice(0, 3));
        bed.outbox.faults.refuse([{ stage: 'rcpt', recipient: 'kid@example.com', code, message }]);
        const refused = await outcomeOf({ email: 'kid@example.com' }).catch((error: unknown) => error);
        expect(refused).toMatchObject({ code: `smtp EENVELOPE ${code}`, wait: 'configuration' });
        expect(await thankYouPart('kid@example.com')).toMatchObject({
          state: 'pending',
          reason: 'configuration',
        });
        expect(await bed.outbox.messages()).toEqual([]);
        bed.outbox.faults.refuse([]);
        expect(await outcomeOf({ email: 'kid@example.com' })).toBe('delivered');
        expect(await bed.outbox.messages()).toHaveLength(1);
      },
    );

    it.each([
      ['550', '5.1.2 Bad destination system'],
      ['550', '5.1.6 Mailbox has moved'],
      ['550', '5.2.1 Mailbox disabled'],
    ])(
      "the person's own mailbox refused at RCPT (%s %s): the part skipped `refused`",
      async (reply, message) => {
        await seedSignups(db, [{ email: 'gone@example.com', ...HERO }]);
        bed.outbox.faults.refuse([
          { stage: 'rcpt', recipient: 'gone@example.com', code: Number(reply), message },
        ]);
        expect(await outcomeOf({ email: 'gone@example.com' })).toBe('refused');
        expect(await thankYouPart('gone@example.com')).toMatchObject({ state: 'skipped', reason: 'refused' });
      },
    );

    it('relaying denied at RCPT (550 5.7.1, not about the mailbox): our setup, the part waits', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      bed.outbox.faults.rejectNext(1, 550, '5.7.1 Relaying denied', 'rcpt');
      await expect(outcomeOf({ email: 'kid@example.com' })).rejects.toMatchObject({ wait: 'configuration' });
      expect(await thankYouPart('kid@example.com')).toMatchObject({
        state: 'pending',
        reason: 'configuration',
      });
      expect(await outcomeOf({ email: 'kid@example.com' })).toBe('delivered');
    });

    it('refusing our message (554 at DATA): our setup, recorded failed, the part waits; the retry after the fix sends it once', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      bed.outbox.faults.rejectNext(1, 554);
      await expect(outcomeOf({ email: 'kid@example.com' })).rejects.toBeInstanceOf(RetryLater);
      expect(await bed.outbox.messages()).toEqual([]);
      expect(await record('kid@example.com')).toMatchObject({
        state: 'failed',
        last_error: 'EMESSAGE 554',
        attempts: 1,
      });
      expect(bed.logger.entries.at(-1)).toMatchObject({
        event: 'thank_you.failed',
        fields: { error: 'EMESSAGE 554' },
      });
      expect(await thankYouPart('kid@example.com')).toMatchObject({
        state: 'pending',
        reason: 'configuration',
        last_error: 'smtp EMESSAGE 554',
      });
      expect(await outcomeOf({ email: 'kid@example.com' })).toBe('delivered');
      expect(await bed.outbox.messages()).toHaveLength(1);
      expect(await record('kid@example.com')).toMatchObject({ state: 'sent', attempts: 2 });
    });

    it('refusing our login (535): the part waits, `configuration`, and Cloud Tasks tries again', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      const refusedLogin: MailTransport = {
        send: async () => {
          throw Object.assign(new Error('Invalid login'), { code: 'EAUTH', responseCode: 535 });
        },
      };
      await expect(
        outcomeOf({ email: 'kid@example.com' }, deps({ transport: async () => refusedLogin })),
      ).rejects.toMatchObject({ name: 'RetryLater', wait: 'configuration' });
      expect(await thankYouPart('kid@example.com')).toMatchObject({
        state: 'pending',
        reason: 'configuration',
        last_error: 'smtp EAUTH 535',
      });
      expect(await outcomeOf({ email: 'kid@example.com' })).toBe('delivered');
      expect(await thankYouPart('kid@example.com')).toMatchObject({ state: 'done' });
      expect(await thankYouPart('kid@example.com')).not.toHaveProperty('reason');
    });

    it.each([
      ['MAIL_FROM', { from: '' }],
      ['UNSUBSCRIBE_URL', { unsubscribeLink: null }],
    ] as const)(
      '%s unset: nothing sent, the part waits saying which, and the task is retried until it is set',
      async (missing, unset) => {
        await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
        await expect(outcomeOf({ email: 'kid@example.com' }, deps(unset))).rejects.toMatchObject({
          name: 'RetryLater',
          wait: 'configuration',
        });
        expect(await thankYouPart('kid@example.com')).toMatchObject({
          state: 'pending',
          reason: 'configuration',
          last_error: `setting ${missing}`,
        });
        expect(bed.logger.entries.at(-1)).toMatchObject({
          event: 'thank_you.not_configured',
          fields: { missing },
        });
        expect(await bed.outbox.messages()).toEqual([]);
        expect(await outcomeOf({ email: 'kid@example.com' })).toBe('delivered');
      },
    );

    it('down: thrown back to Cloud Tasks, and the retry sends it once it is back', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      await bed.outbox.faults.setDown(true);
      await expect(outcomeOf({ email: 'kid@example.com' })).rejects.toBeInstanceOf(RetryLater);
      expect((await record('kid@example.com'))?.last_error).toMatch(/^ECONNECTION|^ESOCKET/);
      expect(await thankYouPart('kid@example.com')).not.toHaveProperty('reason');
      await bed.outbox.faults.setDown(false);
      expect(await outcomeOf({ email: 'kid@example.com' })).toBe('delivered');
      expect(await bed.outbox.messages()).toHaveLength(1);
    });

    it('answering 451 (try again later): thrown back to Cloud Tasks; the retry sends exactly one', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      bed.outbox.faults.rejectNext(1, 451);
      await expect(outcomeOf({ email: 'kid@example.com' })).rejects.toBeInstanceOf(RetryLater);
      expect(bed.logger.entries.at(-1)).toMatchObject({ event: 'thank_you.failed', fields: { retry: true } });
      expect(await thankYouPart('kid@example.com')).toMatchObject({
        state: 'pending',
        attempts: 1,
        last_error: 'smtp EMESSAGE 451',
      });
      expect(await outcomeOf({ email: 'kid@example.com' })).toBe('delivered');
      expect(await outcomeOf({ email: 'kid@example.com' })).toBe('settled');
      expect(await bed.outbox.messages()).toHaveLength(1);
    });

    it("tells whose a failure is by its stage and code: only the recipient's own statuses at RCPT are the recipient's", () => {
      const refusal = (command: string, response: string) =>
        smtpRefusal({ code: 'EENVELOPE', command, response, responseCode: Number(response.slice(0, 3)) });
      expect(refusal('RCPT TO', '550 5.1.1 Mailbox unavailable')).toBe('recipient');
      expect(refusal('RCPT TO', '550 5.1.2 Bad destination system')).toBe('recipient');
      expect(refusal('RCPT TO', '553 5.1.3 Mailbox name not allowed')).toBe('recipient');
      expect(refusal('RCPT TO', '550 5.1.6 Mailbox has moved')).toBe('recipient');
      expect(refusal('RCPT TO', '550 5.2.1 Mailbox disabled')).toBe('recipient');
      // Statuses about our sender, given at RCPT by relays that check the envelope there.
      expect(refusal('RCPT TO', '550 5.1.0 Sender address rejected')).toBe('setup');
      expect(refusal('RCPT TO', '550 5.1.7 Bad sender mailbox syntax')).toBe('setup');
      expect(refusal('RCPT TO', '550 5.1.8 Sender domain does not exist')).toBe('setup');
      expect(refusal('RCPT TO', '550 5.7.26 Unauthenticated email is not accepted')).toBe('setup');
      expect(refusal('RCPT TO', '550 5.7.1 Relaying denied')).toBe('setup');
      expect(refusal('RCPT TO', '550 Mailbox unavailable')).toBe('setup');
      expect(refusal('RCPT TO', '450 4.2.0 Mailbox busy')).toBe('transient');
      expect(refusal('MAIL FROM', '554 5.7.1 Message rejected: Email address is not verified')).toBe('setup');
      expect(refusal('MAIL FROM', '530 5.7.0 Authentication required')).toBe('setup');
      expect(refusal('MAIL FROM', '550 5.1.0 Sender address rejected')).toBe('setup');
      expect(refusal('DATA', '554 5.7.1 Message rejected')).toBe('setup');
      expect(smtpRefusal({ code: 'EAUTH', responseCode: 535 })).toBe('setup');
      expect(smtpRefusal({ code: 'EAUTH' })).toBe('setup');
      expect(smtpRefusal(new SmtpUrlError())).toBe('setup');
      expect(smtpRefusal({ code: 'ETLS' })).toBe('setup');
      expect(smtpRefusal({ code: 'ECONNECTION' })).toBe('transient');
      expect(smtpRefusal({ code: 'EMESSAGE', responseCode: 421 })).toBe('transient');
    });
  });

  describe('when the database fails after the relay accepted the mail', () => {
    /** The thank-you records' writes fail `times` times once the relay has accepted a mail. */
    function failingSaves(times: number) {
      let failures = 0;
      let accepted = false;
      const faulty = faultyFirestore(db, (call, path) => {
        if (!accepted || failures >= times) return undefined;
        if (!path.startsWith(`${THANK_YOU_MAILS}/`) || call !== 'update') return undefined;
        failures += 1;
        return unavailable();
      });
      const transport = async (): Promise<MailTransport> => {
        const real = await smtpTransport(bed.outbox.url);
        return {
          send: async (message) => {
            const sent = await real.send(message);
            accepted = true;
            return sent;
          },
        };
      };
      return deps({ db: faulty, transport, saveRetryMs: [10, 10] });
    }

    it('a save that fails once: saved on its next try, never taken for an SMTP failure, one mail', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      expect(await outcomeOf({ email: 'kid@example.com' }, failingSaves(1))).toBe('delivered');
      expect(await record('kid@example.com')).toMatchObject({ state: 'sent', lease_expires_at: null });
      expect(await outcomeOf({ email: 'kid@example.com' })).toBe('settled');
      expect(await bed.outbox.messages()).toHaveLength(1);
      expect(bed.logger.events()).not.toContain('thank_you.failed');
    });

    it('a save that keeps failing: the record stays claimed (never `failed`); the next round carries the claim and saves it once the database answers, never sending again', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      expect(await outcomeOf({ email: 'kid@example.com' }, failingSaves(3))).toBe('sent_unsaved');
      const unsaved = await record('kid@example.com');
      expect(unsaved?.state).toBe('sending');
      // Cloud Tasks holds what the database could not: round 1, naming the claim.
      const { signup } = await taskFor(db, 'kid@example.com');
      expect(queue.tasks.map((task) => task.payload)).toEqual([
        { signup, round: 1, sent: unsaved?.attempt_id },
      ]);
      expect(bed.logger.events()).toContain('thank_you.sent_unsaved');
      expect(bed.logger.events()).not.toContain('thank_you.failed');
      // The database back: that task saves the mail `sent` and settles the part done; nothing is sent again.
      expect(await handleDeliverThankYou(queue.tasks[0]?.payload, deps())).toBe('already_delivered');
      expect(await record('kid@example.com')).toMatchObject({ state: 'sent', lease_expires_at: null });
      expect(await thankYouPart('kid@example.com')).toMatchObject({ state: 'done', round: 1 });
      // A late retry of round 0, once its lease would have run out, finds it sent.
      expect(
        await outcomeOf({ email: 'kid@example.com' }, deps({ clock: clockAhead(THANK_YOU_LEASE_MS) })),
      ).toBe('settled');
      expect(await bed.outbox.messages()).toHaveLength(1);
    });
  });

  describe('before it is sent', () => {
    it('an erasure between the enqueue and the dispatch: nothing is sent', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      const task = await taskFor(db, 'kid@example.com');
      for (const doc of (await db.collection('email_subscriptions').get()).docs) await doc.ref.delete();
      expect(await handleDeliverThankYou(task, deps())).toBe('gone');
      expect(await bed.outbox.messages()).toEqual([]);
      expect(await thankYouRecords()).toBe(0);
    });

    it('a person who unsubscribes while the task claims the record and takes its slot: nothing is sent', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      const mailboxes = testMailboxes(db);
      const among = mailboxes.suppression.among.bind(mailboxes.suppression);
      let looks = 0;
      // The click lands after the task's first look at the list.
      mailboxes.suppression.among = async (...args) => {
        looks += 1;
        if (looks === 2) await suppressMailbox(db, 'kid@example.com');
        return among(...args);
      };
      expect(await outcomeOf({ email: 'kid@example.com' }, deps({ mailboxes }))).toBe('suppressed');
      expect(await bed.outbox.messages()).toEqual([]);
      expect((await record('kid@example.com'))?.state).not.toBe('sending');
      expect(await thankYouPart('kid@example.com')).toMatchObject({ state: 'skipped', reason: 'suppressed' });
    });

    it('the database unreachable: thrown back to Cloud Tasks', async () => {
      await expect(
        outcomeOf({ email: 'kid@example.com' }, { ...deps(), db: brokenDb() }),
      ).rejects.toBeInstanceOf(RetryLater);
    });

    it('a function without its mailbox key secret: our setup, thrown back to Cloud Tasks; the part still waits', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      const unkeyed = new Mailboxes(db, { mailbox: '', unsubscribe: UNSUBSCRIBE_SECRET });
      await expect(outcomeOf({ email: 'kid@example.com' }, deps({ mailboxes: unkeyed }))).rejects.toThrow(
        'MAILBOX_KEY_SECRET is empty.',
      );
      expect(await thankYouPart('kid@example.com')).toMatchObject({ state: 'pending' });
      expect(await bed.outbox.messages()).toEqual([]);
    });

    it('a malformed task is dropped with one log line', async () => {
      expect(await handleDeliverThankYou({ email: 'not an address' }, deps())).toBe('dropped');
      expect(bed.logger.events()).toEqual(['thank_you.task_malformed']);
    });
  });

  describe('a send that crashed', () => {
    /** A transport that never answers: the call holding the claim "crashes" while sending. */
    const hanging: MailTransport = { send: () => new Promise(() => {}) };

    it('is not repeated while its lease runs', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      void outcomeOf({ email: 'kid@example.com' }, deps({ transport: async () => hanging }));
      await expect.poll(async () => (await record('kid@example.com'))?.state).toBe('sending');
      // Thrown back to Cloud Tasks: the holder sends, or its lease runs out and a retry does.
      await expect(outcomeOf({ email: 'kid@example.com' })).rejects.toBeInstanceOf(RetryLater);
      expect(await bed.outbox.messages()).toEqual([]);
    });

    it('is retried once its lease has expired, and sent once', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      void outcomeOf({ email: 'kid@example.com' }, deps({ transport: async () => hanging }));
      await expect.poll(async () => (await record('kid@example.com'))?.state).toBe('sending');
      const later: Clock = clockAhead(THANK_YOU_LEASE_MS + 1_000);
      expect(await outcomeOf({ email: 'kid@example.com' }, deps({ clock: later }))).toBe('delivered');
      expect(await outcomeOf({ email: 'kid@example.com' }, deps({ clock: later }))).toBe('settled');
      expect(await bed.outbox.messages()).toHaveLength(1);
      expect(await record('kid@example.com')).toMatchObject({ state: 'sent', attempts: 2 });
    });

    it('cannot be taken over while the function that claimed it may still run', () => {
      expect(THANK_YOU_LEASE_MS).toBeGreaterThan(THANK_YOU_TIMEOUT_SECONDS * 1000);
    });
  });

  describe('the way out', () => {
    const unfold = (value: string | undefined) => (value ?? '').replace(/\r?\n(?=[ \t])/g, '');

    it('carries a one-click unsubscribe link (RFC 8058) that opens only to this address, shown nowhere in clear', async () => {
      await seedSignups(db, [{ email: 'Kid@Example.com', ...HERO }]);
      await outcomeOf({ email: 'Kid@Example.com' });
      const [message] = await bed.outbox.messages();
      const header = unfold(message?.headers['list-unsubscribe']);
      const link = /^<(http[^>]+)>$/.exec(header)?.[1];
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
  });
});

/** A Firestore whose every query fails, as an unreachable database does. */
function brokenDb(): Firestore {
  return {
    collection: () => {
      throw Object.assign(new Error('unavailable'), { code: 14 });
    },
  } as unknown as Firestore;
}
