// The one-click way out: the unsubscribe endpoint against the stand-ins (Firestore, MailerLite over
// loopback), the erasure it runs, and a sync that was holding the address when it ran.

import { beforeEach, describe, expect, it } from 'vitest';
import { testBed } from '../../test-support/bed';
import { clockAhead } from '../../test-support/logs';
import { mailerLiteClient } from '../../test-support/mailerlite';
import { countReads } from '../../test-support/reads';
import {
  FINAL,
  HERO,
  MAILBOX_SECRET,
  seedSignups,
  testMailboxes,
  UNSUBSCRIBE_SECRET,
} from '../../test-support/signups';
import { type EnqueuedTask, recordingEnqueue } from '../../test-support/tasks';
import { callUnsubscribe, type UnsubscribeRequest } from '../../test-support/unsubscribe';
import { systemClock } from '../clock';
import { SIGNUPS, SUPPRESSIONS, THANK_YOU_MAILS } from '../contract';
import { type Enqueue, ERASURE_QUEUE, RetryLater } from '../delivery/queue';
import {
  isOneClick,
  LINK_POSTS_PER_WINDOW,
  LinkLimiter,
  ONE_CLICK_BODY_LIMIT_BYTES,
} from '../http/unsubscribe';
import { type EraseDeps, type ErasureStep, eraseAddress } from './erasure';
import {
  FINISH_TASK_DELAY_MS,
  finishErasureLater,
  finishPendingErasures,
  handleFinishErasure,
} from './finish-erasure';
import { mailboxKey } from './mailbox-key';
import type { Mailboxes } from './mailboxes';
import { CONTACT_PUSH_LEASE_MS } from './mailerlite-contacts';
import { unsubscribeToken } from './unsubscribe-token';

const bed = testBed({ mailerLite: true });
const { db } = bed;
let limiter: LinkLimiter;

beforeEach(() => {
  limiter = new LinkLimiter();
});

function eraseDeps(extra: Partial<EraseDeps> = {}): EraseDeps {
  return {
    db,
    client: mailerLiteClient(bed.ml),
    clock: systemClock,
    logger: bed.logger,
    mailboxes: testMailboxes(db),
    ...extra,
  };
}

/** The suppression entry of kid's mailbox (every spelling of kid@example.com has this one). */
async function entryOfKid(): Promise<Record<string, unknown>> {
  return (
    (await db.collection(SUPPRESSIONS).doc(mailboxKey(MAILBOX_SECRET, 'kid@example.com')).get()).data() ?? {}
  );
}

function finishPending() {
  return finishPendingErasures(eraseDeps());
}

function unsubscribe(request: UnsubscribeRequest, extra: Partial<EraseDeps> = {}) {
  return callUnsubscribe(request, {
    logger: bed.logger,
    limiter,
    now: () => Date.now(),
    erase: (email) => eraseAddress(email, eraseDeps(extra)),
  });
}

/** Cloud Tasks as the erasure sees it: the mailboxes of a function that hands a pending mark to its finish task. */
function recordingQueue(): { tasks: EnqueuedTask[]; mailboxes: Mailboxes } {
  const { tasks, enqueue } = recordingEnqueue();
  return { tasks, mailboxes: testMailboxes(db, finishErasureLater(enqueue, systemClock)) };
}

const ONE_CLICK = { 'List-Unsubscribe': 'One-Click' };

async function emailsStored(): Promise<string[]> {
  return (await db.collection(SIGNUPS).get()).docs.map((doc) => doc.get('email') as string).sort();
}

/** kid signed up through both forms, once as typed in capitals; a friend is on the list too. */
async function seedKidAndFriend(): Promise<void> {
  await seedSignups(
    db,
    [
      { email: 'Kid@Example.com', ...HERO },
      { email: 'kid@example.com', ...FINAL },
      { email: 'friend@example.com', ...HERO },
    ],
    Date.now() - 60_000,
  );
  for (const email of ['kid@example.com', 'friend@example.com']) {
    await mailerLiteClient(bed.ml).upsertSubscriber({ email });
  }
  await db
    .collection(THANK_YOU_MAILS)
    .doc(mailboxKey(MAILBOX_SECRET, 'kid@example.com'))
    .set({ state: 'sent' });
}

/** kid and a friend seeded, kid's entry left pending with its address sealed under another secret (one rotated since). */
async function seedPendingUnderAnotherSecret(): Promise<string> {
  const entry = mailboxKey(MAILBOX_SECRET, 'kid@example.com');
  await db
    .collection(SUPPRESSIONS)
    .doc(entry)
    .set({
      erased_at: new Date(),
      pending: true,
      pending_id: 'an-attempt',
      sealed: unsubscribeToken('a-rotated-secret', 'kid@example.com'),
    });
  await seedKidAndFriend();
  return entry;
}

describe('the unsubscribe link', () => {
  it('GET shows a page with one Unsubscribe button, erases nothing, and sends strict headers', async () => {
    await seedKidAndFriend();
    const response = await unsubscribe({
      method: 'GET',
      query: { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'Kid@Example.com') },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatch(/^<!DOCTYPE html>\n<html lang="en">/);
    expect(response.body).toContain('<title>Unsubscribe from GOODY · GOODY</title>');
    expect(response.body).toContain('<h1>Unsubscribe from GOODY</h1>');
    expect([...response.body.matchAll(/<form method="post">/g)]).toHaveLength(1);
    expect(response.body).toContain('<input type="hidden" name="List-Unsubscribe" value="One-Click">');
    expect([...response.body.matchAll(/<button[^>]*>([^<]*)<\/button>/g)].map((m) => m[1])).toEqual([
      'Unsubscribe',
    ]);
    expect(response.body.toLowerCase()).not.toContain('kid');
    expect(response.headers).toMatchObject({
      'Content-Type': 'text/html; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'X-Robots-Tag': 'noindex, nofollow',
      'Cache-Control': 'no-store',
    });
    expect(response.headers['Content-Security-Policy']).toMatch(
      /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'$/,
    );
    expect(await emailsStored()).toEqual(['Kid@Example.com', 'friend@example.com', 'kid@example.com']);
    expect(bed.ml.state.subscribers.map((s) => s.email).sort()).toEqual([
      'friend@example.com',
      'kid@example.com',
    ]);
    expect(bed.ml.state.requests.filter((r) => r.path.startsWith('/api/'))).toHaveLength(2);
  });

  it('POST List-Unsubscribe=One-Click erases both forms of the address and the MailerLite subscriber, and suppresses the mailbox; a second POST answers the same and asks MailerLite nothing', async () => {
    await seedKidAndFriend();
    const query = { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'Kid@Example.com') };
    const first = await unsubscribe({ method: 'POST', query, body: ONE_CLICK });
    expect(first.status).toBe(200);
    expect(first.body).toContain('<h1>You’re unsubscribed</h1>');
    expect(await emailsStored()).toEqual(['friend@example.com']);
    expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
    // The thank-you record (no address in it) stays, so the mailbox is never thanked again; the
    // suppression entry holds no address either.
    expect(
      (await db.collection(THANK_YOU_MAILS).doc(mailboxKey(MAILBOX_SECRET, 'kid@example.com')).get()).exists,
    ).toBe(true);
    const entry = await entryOfKid();
    expect(Object.keys(entry)).toEqual(['erased_at']);
    expect(
      bed.ml.state.requests.map((r) => `${r.method} ${r.path.split('/').slice(0, 3).join('/')} ${r.status}`),
    ).toContain('POST /api/subscribers 200');
    expect(bed.logger.entries.find((entry) => entry.event === 'unsubscribe.erased')?.fields).toMatchObject({
      email_masked: 'k***@e***.com',
      signups: 2,
      mailerlite: 'forgotten',
    });
    expect(bed.logger.text()).not.toMatch(/kid@example\.com/i);

    const requestsBefore = bed.ml.state.requests.length;
    const second = await unsubscribe({ method: 'POST', query, body: ONE_CLICK });
    expect(second).toEqual(first);
    expect(second.body).toContain('even if this address is signed up again');
    expect(second.body).toContain('<a href="mailto:hello@goody.example">');
    expect(await emailsStored()).toEqual(['friend@example.com']);
    expect(bed.ml.state.requests.length).toBe(requestsBefore);
    expect(bed.logger.events().at(-1)).toBe('unsubscribe.repeated');
  });

  it('takes the one-click body as mail providers send it: raw urlencoded, or multipart', async () => {
    await seedKidAndFriend();
    const query = { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'friend@example.com') };
    const raw = await unsubscribe({
      method: 'POST',
      query,
      rawBody: Buffer.from('List-Unsubscribe=One-Click'),
    });
    expect(raw.status).toBe(200);
    expect(await emailsStored()).toEqual(['Kid@Example.com', 'kid@example.com']);

    const multipart = [
      '--b',
      'Content-Disposition: form-data; name="List-Unsubscribe"',
      '',
      'One-Click',
      '--b--',
      '',
    ].join('\r\n');
    const kid = { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'kid@example.com') };
    expect((await unsubscribe({ method: 'POST', query: kid, rawBody: Buffer.from(multipart) })).status).toBe(
      200,
    );
    // The link names kid@example.com; the row stored as Kid@Example.com is the same person's.
    expect(await emailsStored()).toEqual([]);
  });

  it('refuses a body larger than a one-click POST needs (413), and erases nothing', async () => {
    await seedKidAndFriend();
    const query = { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'friend@example.com') };
    const padded = `List-Unsubscribe=One-Click&pad=${'x'.repeat(8 * 1024)}`;
    const response = await unsubscribe({ method: 'POST', query, rawBody: Buffer.from(padded) });
    expect(response.status).toBe(413);
    expect(await emailsStored()).toEqual(['Kid@Example.com', 'friend@example.com', 'kid@example.com']);
  });

  it('reads a multipart body by its parts: the value after the blank line, nothing else', () => {
    const part = (value: string, blank = '\r\n') =>
      Buffer.from(
        `--b\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n${blank}${value}\r\n--b--\r\n`,
      );
    expect(isOneClick({ rawBody: part('One-Click') })).toBe(true);
    expect(isOneClick({ rawBody: part('One-Click', '') })).toBe(false);
    expect(isOneClick({ rawBody: part('One-Click-Not') })).toBe(false);
    // Headers that never end (no blank line) up to the limit: no value, no match.
    const endless = 'Content-Disposition: form-data; name="List-Unsubscribe"\r\n'.repeat(70);
    expect(isOneClick({ rawBody: Buffer.from(endless.slice(0, ONE_CLICK_BODY_LIMIT_BYTES)) })).toBe(false);
    expect(isOneClick({ rawBody: Buffer.from('a=1&List-Unsubscribe=One-Click') })).toBe(true);
    expect(isOneClick({ rawBody: Buffer.from('List-Unsubscribe=One-Clickx') })).toBe(false);
  });

  it.each<[string, () => Record<string, unknown>]>([
    ['no token', () => ({})],
    ['a token of another secret', () => ({ ...unsubscribeToken('another-secret', 'kid@example.com') })],
    [
      'the seal of one address with the MAC of another',
      () => ({
        a: unsubscribeToken(UNSUBSCRIBE_SECRET, 'kid@example.com').a,
        t: unsubscribeToken(UNSUBSCRIBE_SECRET, 'friend@example.com').t,
      }),
    ],
    [
      'a flipped character in the seal',
      () => {
        const { a, t } = unsubscribeToken(UNSUBSCRIBE_SECRET, 'kid@example.com');
        return { a: `${a.slice(0, 10)}${a[10] === 'A' ? 'B' : 'A'}${a.slice(11)}`, t };
      },
    ],
    ['a truncated MAC', () => ({ ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'kid@example.com'), t: 'abc' })],
    ['arrays', () => ({ a: ['x'], t: ['y'] })],
  ])('refuses %s with 400 and erases nothing', async (_, query) => {
    await seedKidAndFriend();
    for (const method of ['GET', 'POST']) {
      const response = await unsubscribe({ method, query: query(), body: ONE_CLICK });
      expect(response.status).toBe(400);
      expect(response.body).toContain('<h1>This link doesn’t work</h1>');
    }
    expect(await emailsStored()).toEqual(['Kid@Example.com', 'friend@example.com', 'kid@example.com']);
    expect(bed.ml.state.subscribers).toHaveLength(2);
    expect(bed.logger.events()).toEqual(['unsubscribe.refused_token', 'unsubscribe.refused_token']);
  });

  it('a POST without the one-click body erases nothing and offers the button', async () => {
    await seedKidAndFriend();
    const query = { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'kid@example.com') };
    const response = await unsubscribe({ method: 'POST', query, body: {} });
    expect(response.status).toBe(400);
    expect(response.body).toContain('<button type="submit">Unsubscribe</button>');
    expect(await emailsStored()).toHaveLength(3);
  });

  it('other methods: 405 with Allow', async () => {
    const response = await unsubscribe({
      method: 'DELETE',
      query: { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'kid@example.com') },
    });
    expect(response.status).toBe(405);
    expect(response.headers.Allow).toBe('GET, HEAD, POST');
  });

  it('a failing database: 503 with the button to try again', async () => {
    const response = await callUnsubscribe(
      {
        method: 'POST',
        query: { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'kid@example.com') },
        body: ONE_CLICK,
      },
      {
        logger: bed.logger,
        limiter,
        now: () => Date.now(),
        erase: () => Promise.reject(new Error('Firestore unavailable')),
      },
    );
    expect(response.status).toBe(503);
    expect(response.body).toContain('<button type="submit">Unsubscribe</button>');
    expect(bed.logger.entries.map((entry) => entry.event)).toEqual(['unsubscribe.failed']);
  });
});

describe('MailerLite down during an erasure', () => {
  it('the click is enough: Firestore is erased at once, and the forget is retried until MailerLite answers', async () => {
    await seedKidAndFriend();
    const query = { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'Kid@Example.com') };
    bed.ml.faults.down = true;
    const response = await unsubscribe({ method: 'POST', query, body: ONE_CLICK });
    expect(response.status).toBe(200);
    expect(response.body).toContain('<h1>You’re unsubscribed</h1>');
    expect(response.body).toContain('we’ll delete it there as soon as it does');
    expect(await emailsStored()).toEqual(['friend@example.com']);

    // The entry holds the address sealed, never in clear.
    const entry = await entryOfKid();
    expect(entry.pending).toBe(true);
    expect(JSON.stringify(entry)).not.toMatch(/kid@example\.com/i);

    // Still down: nothing changes, it stays pending.
    expect(await finishPending()).toEqual({ finished: 0, stillPending: 1, unopenable: 0 });
    expect((await entryOfKid()).pending).toBe(true);

    bed.ml.faults.down = false;
    expect(await finishPending()).toEqual({ finished: 1, stillPending: 0, unopenable: 0 });
    expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
    const done = await entryOfKid();
    expect(Object.keys(done)).toEqual(['erased_at']);
    // Nothing left to do on the next run.
    expect(await finishPending()).toEqual({ finished: 0, stillPending: 0, unopenable: 0 });
    expect(bed.logger.text()).not.toMatch(/kid@example\.com/i);
  });

  it('a sign-up made again meanwhile stays off MailerLite, and the forget is still done', async () => {
    await seedKidAndFriend();
    bed.ml.faults.down = true;
    await unsubscribe({
      method: 'POST',
      query: { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'kid@example.com') },
      body: ONE_CLICK,
    });
    bed.ml.faults.down = false;
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }], Date.now() + 1_000);

    expect(await finishPending()).toEqual({ finished: 1, stillPending: 0, unopenable: 0 });
    expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
    expect((await entryOfKid()).pending).toBeUndefined();
  });

  it('a token sealed with another secret stays pending and is reported, erasing nothing', async () => {
    await seedPendingUnderAnotherSecret();
    expect(await finishPending()).toEqual({ finished: 0, stillPending: 0, unopenable: 1 });
    expect(bed.ml.state.subscribers).toHaveLength(2);
    expect(bed.logger.entries.at(-1)).toMatchObject({ severity: 'error', event: 'pending_erasures.run' });
  });
});

describe('an erasure MailerLite left pending, on its own task', () => {
  const kidsLink = () => ({ ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'Kid@Example.com') });

  /** kid (and a friend) signed up; kid's click comes while MailerLite is down, which it stays. Returns the queue. */
  async function clickWhileMailerLiteDown() {
    await seedKidAndFriend();
    const queue = recordingQueue();
    bed.ml.faults.down = true;
    await unsubscribe({ method: 'POST', query: kidsLink(), body: ONE_CLICK }, { mailboxes: queue.mailboxes });
    return queue;
  }

  it('a click while MailerLite is down enqueues one finish task naming only the entry, a minute later; a second click no other', async () => {
    await seedKidAndFriend();
    const queue = recordingQueue();
    bed.ml.faults.down = true;
    const before = Date.now();
    const click = () =>
      unsubscribe({ method: 'POST', query: kidsLink(), body: ONE_CLICK }, { mailboxes: queue.mailboxes });
    expect((await click()).status).toBe(200);
    expect((await click()).body).toContain('we’ll delete it there as soon as it does');
    expect(queue.tasks).toHaveLength(1);
    const [task] = queue.tasks;
    expect(task?.queue).toBe(ERASURE_QUEUE);
    expect(task?.payload).toEqual({ entry: mailboxKey(MAILBOX_SECRET, 'kid@example.com') });
    expect(task?.id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(JSON.stringify(task)).not.toMatch(/kid/i);
    expect(task?.notBefore).toBeGreaterThanOrEqual(before + FINISH_TASK_DELAY_MS);
  });

  it('a click MailerLite answers enqueues nothing', async () => {
    await seedKidAndFriend();
    const queue = recordingQueue();
    expect(
      (
        await unsubscribe(
          { method: 'POST', query: kidsLink(), body: ONE_CLICK },
          { mailboxes: queue.mailboxes },
        )
      ).status,
    ).toBe(200);
    expect(Object.keys(await entryOfKid())).toEqual(['erased_at']);
    expect(queue.tasks).toEqual([]);
  });

  it('a queue that cannot be reached does not fail the click: logged, and the job finishes the entry', async () => {
    await seedKidAndFriend();
    bed.ml.faults.down = true;
    const enqueue: Enqueue = async () => {
      throw new Error('Cloud Tasks is unavailable');
    };
    const response = await unsubscribe(
      { method: 'POST', query: kidsLink(), body: ONE_CLICK },
      { mailboxes: testMailboxes(db, finishErasureLater(enqueue, systemClock)) },
    );
    expect(response.status).toBe(200);
    expect(response.body).toContain('<h1>You’re unsubscribed</h1>');
    expect(await emailsStored()).toEqual(['friend@example.com']);
    expect(bed.logger.entries.find((entry) => entry.event === 'unsubscribe.enqueue_failed')).toMatchObject({
      severity: 'warn',
      fields: { finish_task: 'enqueue_failed' },
    });
    bed.ml.faults.down = false;
    expect(await finishPending()).toEqual({ finished: 1, stillPending: 0, unopenable: 0 });
    expect(bed.logger.text()).not.toMatch(/kid@example\.com/i);
  });

  it('the task fails while MailerLite is still down, so Cloud Tasks retries it; once MailerLite is back it finishes the erasure', async () => {
    const queue = await clickWhileMailerLiteDown();
    const payload = queue.tasks[0]?.payload;

    await expect(handleFinishErasure(payload, eraseDeps())).rejects.toBeInstanceOf(RetryLater);
    expect((await entryOfKid()).pending).toBe(true);
    expect(bed.ml.state.subscribers.map((s) => s.email).sort()).toEqual([
      'friend@example.com',
      'kid@example.com',
    ]);

    // A sign-up made again meanwhile goes too.
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }], Date.now() + 1_000);
    bed.ml.faults.down = false;
    expect(await handleFinishErasure(payload, eraseDeps())).toBe('finished');
    expect(await emailsStored()).toEqual(['friend@example.com']);
    expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
    expect(Object.keys(await entryOfKid())).toEqual(['erased_at']);
    expect(bed.logger.text()).not.toMatch(/kid@example\.com/i);
  });

  it('a task for an entry finished meanwhile does nothing and asks MailerLite nothing', async () => {
    const queue = await clickWhileMailerLiteDown();
    bed.ml.faults.down = false;
    expect(await finishPending()).toEqual({ finished: 1, stillPending: 0, unopenable: 0 });
    await seedSignups(db, [{ email: 'friend2@example.com', ...HERO }]);

    const requests = bed.ml.state.requests.length;
    expect(await handleFinishErasure(queue.tasks[0]?.payload, eraseDeps())).toBe('not_pending');
    expect(bed.ml.state.requests.length).toBe(requests);
    expect(await emailsStored()).toEqual(['friend2@example.com', 'friend@example.com']);
    expect(Object.keys(await entryOfKid())).toEqual(['erased_at']);
  });

  it('a task whose entry was sealed with another secret is reported and dropped, not retried', async () => {
    const entry = await seedPendingUnderAnotherSecret();
    expect(await handleFinishErasure({ entry }, eraseDeps())).toBe('unopenable');
    expect(bed.ml.state.subscribers).toHaveLength(2);
    expect((await entryOfKid()).pending).toBe(true);
    expect(bed.logger.entries.at(-1)).toMatchObject({
      severity: 'error',
      event: 'pending_erasures.run',
      fields: { unopenable: 1 },
    });
  });

  it('a task that names no entry is dropped', async () => {
    for (const body of [null, {}, { entry: 'kid@example.com' }, { entry: 'a/b' }]) {
      expect(await handleFinishErasure(body, eraseDeps())).toBe('dropped');
    }
    expect(bed.logger.events()).toEqual(Array(4).fill('finish_erasure.task_malformed'));
  });
});

describe('an erasure written ahead', () => {
  class Crash extends Error {}
  /** The erasure's deps, stopping it after `step` as a crash would. */
  const stoppedAfter = (step: ErasureStep) =>
    eraseDeps({
      afterStep: (at) => {
        if (at === step) throw new Crash(at);
      },
    });

  it.each<ErasureStep>(['marked', 'rows_deleted', 'forgotten'])(
    'stopped after "%s": the mark stays with the address sealed, and the next run finishes it',
    async (step) => {
      await seedKidAndFriend();
      const crash = stoppedAfter(step);
      await expect(eraseAddress('Kid@Example.com', crash)).rejects.toBeInstanceOf(Crash);
      const entry = await entryOfKid();
      expect(entry.pending).toBe(true);
      expect(JSON.stringify(entry)).not.toMatch(/kid@example\.com/i);
      if (step === 'marked') expect(await emailsStored()).toHaveLength(3);
      else expect(await emailsStored()).toEqual(['friend@example.com']);

      expect(await finishPending()).toEqual({ finished: 1, stillPending: 0, unopenable: 0 });
      expect(await emailsStored()).toEqual(['friend@example.com']);
      expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
      expect(Object.keys(await entryOfKid())).toEqual(['erased_at']);
    },
  );

  it.each<ErasureStep>(['marked', 'rows_deleted', 'forgotten'])(
    'stopped after "%s": a second click finishes it too',
    async (step) => {
      await seedKidAndFriend();
      const crash = stoppedAfter(step);
      await expect(eraseAddress('kid@example.com', crash)).rejects.toBeInstanceOf(Crash);
      expect(await eraseAddress('kid@example.com', eraseDeps())).toMatchObject({
        mailerLite: step === 'forgotten' ? 'absent' : 'forgotten',
      });
      expect(await emailsStored()).toEqual(['friend@example.com']);
      expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
      expect(Object.keys(await entryOfKid())).toEqual(['erased_at']);
    },
  );

  it('a second click while the first waits for MailerLite keeps the mark until one of them is done', async () => {
    await seedKidAndFriend();
    bed.ml.faults.down = true;
    expect((await eraseAddress('kid@example.com', eraseDeps())).mailerLite).toBe('pending');
    expect((await eraseAddress('kid@example.com', eraseDeps())).mailerLite).toBe('pending');
    expect((await entryOfKid()).pending).toBe(true);
    bed.ml.faults.down = false;
    expect((await eraseAddress('kid@example.com', eraseDeps())).mailerLite).toBe('forgotten');
    expect(Object.keys(await entryOfKid())).toEqual(['erased_at']);
  });

  it('a push undone while an earlier erasure of another spelling waits keeps both addresses to forget', async () => {
    for (const email of ['kid.teen@gmail.com', 'kidteen+x@gmail.com', 'friend@example.com']) {
      await mailerLiteClient(bed.ml).upsertSubscriber({ email });
    }
    bed.ml.faults.down = true;
    expect((await eraseAddress('kid.teen@gmail.com', eraseDeps())).mailerLite).toBe('pending');
    // The sync pushed another spelling meanwhile and could not forget it either: the mark gets its seal too.
    const push = await testMailboxes(db).suppression.forgetNowOrLater(
      mailerLiteClient(bed.ml),
      'kidteen+x@gmail.com',
      { now: Date.now() },
    );
    expect(push.kind).toBe('pending');
    bed.ml.faults.down = false;
    expect(await finishPending()).toEqual({ finished: 1, stillPending: 0, unopenable: 0 });
    expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
  });

  it('past its deadline, leaves the rest pending for the next run instead of running on', async () => {
    await seedKidAndFriend();
    const report = await eraseAddress('kid@example.com', eraseDeps({ deadline: Date.now() - 1 }));
    expect(report).toEqual({ signups: 0, mailerLite: 'pending' });
    expect(await emailsStored()).toHaveLength(3);
    expect((await entryOfKid()).pending).toBe(true);
    expect(await finishPending()).toEqual({ finished: 1, stillPending: 0, unopenable: 0 });
    expect(await emailsStored()).toEqual(['friend@example.com']);
  });
});

describe('an erasure while a contact task pushes the mailbox', () => {
  it('keeps the mark until the push has certainly ended, then forgets again: a push landing after the forget is undone', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    // A contact task holds the mailbox's push (deliver-contact.ts claims the record's lease before upserting).
    const mailboxes = testMailboxes(db);
    const claim = await mailboxes.contacts.claim('kid@example.com', { list: 'updates', clock: systemClock });
    if (claim.status !== 'claimed') throw new Error('not claimed');
    const queue = recordingEnqueue();
    const deps = eraseDeps({ mailboxes: testMailboxes(db, finishErasureLater(queue.enqueue, systemClock)) });
    expect(await eraseAddress('kid@example.com', deps)).toMatchObject({ mailerLite: 'pending' });
    expect(await entryOfKid()).toMatchObject({ pending: true });
    expect(queue.tasks.map((task) => task.queue)).toEqual([ERASURE_QUEUE]);
    // The task's upsert lands after the erasure's forget, and the task dies before its own check.
    await mailerLiteClient(bed.ml).upsertSubscriber({ email: 'kid@example.com', groups: [] }, {});
    expect(bed.ml.state.subscribers).toHaveLength(1);
    // Its finish task, while the push's lease runs: still pending, retried later.
    const entry = { entry: mailboxKey(MAILBOX_SECRET, 'kid@example.com') };
    await expect(handleFinishErasure(entry, deps)).rejects.toBeInstanceOf(RetryLater);
    // Once the lease has run out the push is over for certain: forgotten, and the mark cleared.
    const later = clockAhead(CONTACT_PUSH_LEASE_MS + 1_000);
    expect(await handleFinishErasure(entry, { ...deps, clock: later })).toBe('finished');
    expect(bed.ml.state.subscribers).toEqual([]);
    expect(await entryOfKid()).not.toHaveProperty('pending', true);
  });
});

describe('one mailbox, many spellings', () => {
  it('erases every spelling of a Gmail mailbox, and MailerLite forgets each of them', async () => {
    const spellings = ['Kid.Teen@gmail.com', 'kidteen+goody@googlemail.com', 'k.i.d.t.e.e.n@gmail.com'];
    await seedSignups(db, [
      ...spellings.map((email) => ({ email, ...HERO })),
      { email: 'friend@example.com', ...HERO },
    ]);
    for (const email of [...spellings, 'friend@example.com']) {
      await mailerLiteClient(bed.ml).upsertSubscriber({ email: email.toLowerCase() });
    }
    const link = { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'kidteen+goody@googlemail.com') };
    expect((await unsubscribe({ method: 'POST', query: link, body: ONE_CLICK })).status).toBe(200);
    expect(await emailsStored()).toEqual(['friend@example.com']);
    expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
    expect(bed.logger.entries.find((entry) => entry.event === 'unsubscribe.erased')?.fields).toMatchObject({
      signups: 3,
      aliases: 2,
    });
  });

  it("the +tag spelling's link erases the mailbox whose contact moved to its bare spelling; the thank-you record keeps no row id", async () => {
    await seedSignups(db, [
      { email: 'kid+x@school-example.org', ...HERO },
      { email: 'kid@school-example.org', ...HERO },
      { email: 'friend@example.com', ...HERO },
    ]);
    const [tagged] = (await db.collection(SIGNUPS).where('email', '==', 'kid+x@school-example.org').get())
      .docs;
    const [bare] = (await db.collection(SIGNUPS).where('email', '==', 'kid@school-example.org').get()).docs;
    // The contact moved to the bare spelling (delivery/deliver-contact.ts); the record names it.
    for (const email of ['kid@school-example.org', 'friend@example.com']) {
      await mailerLiteClient(bed.ml).upsertSubscriber({ email });
    }
    await db
      .collection('mailerlite_contacts')
      .doc(mailboxKey(MAILBOX_SECRET, 'kid@school-example.org'))
      .set({ email: 'kid@school-example.org', seen_at: new Date() });
    const thanks = db.collection(THANK_YOU_MAILS).doc(mailboxKey(MAILBOX_SECRET, 'kid@school-example.org'));
    await thanks.set({
      state: 'sent',
      spelling: 'bare',
      tagged_thanked: true,
      signup: bare?.id,
      tagged_signup: tagged?.id,
      attempts: 2,
    });
    const link = { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'kid+x@school-example.org') };
    expect((await unsubscribe({ method: 'POST', query: link, body: ONE_CLICK })).status).toBe(200);
    expect(await emailsStored()).toEqual(['friend@example.com']);
    expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
    // What keeps the mailbox from a third mail stays; the id of a row of it does not.
    expect((await thanks.get()).data()).toEqual({
      state: 'sent',
      spelling: 'bare',
      tagged_thanked: true,
      attempts: 2,
    });
  });

  it('finds a row the trigger has not keyed yet by the spelling the link names', async () => {
    await seedSignups(db, [{ email: 'Kid@Example.com', ...HERO }], Date.now(), { keyed: false });
    await eraseAddress('Kid@Example.com', eraseDeps());
    expect(await emailsStored()).toEqual([]);
  });
});

describe('a replayed link', () => {
  it(`answers 429 beyond ${LINK_POSTS_PER_WINDOW} POSTs a minute, erasing nothing more`, async () => {
    await seedKidAndFriend();
    const query = { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'kid@example.com') };
    const statuses: number[] = [];
    for (let i = 0; i < LINK_POSTS_PER_WINDOW + 3; i += 1) {
      statuses.push((await unsubscribe({ method: 'POST', query, body: ONE_CLICK })).status);
    }
    expect(statuses).toEqual([...Array.from({ length: LINK_POSTS_PER_WINDOW }, () => 200), 429, 429, 429]);
    const limited = await unsubscribe({ method: 'POST', query, body: ONE_CLICK });
    expect(limited.headers['Retry-After']).toBe('60');
    // Another link is not held back by this one's replays.
    const friend = { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'friend@example.com') };
    expect((await unsubscribe({ method: 'POST', query: friend, body: ONE_CLICK })).status).toBe(200);
    // One request to MailerLite for kid's whole replay: the first click's forget (a look-up and the forget).
    const kidForgets = bed.ml.state.requests.filter((r) => r.path.includes('/forget'));
    expect(kidForgets).toHaveLength(2);
  });

  it('costs two Firestore reads and no MailerLite request once the erasure is done', async () => {
    await seedKidAndFriend();
    await eraseAddress('kid@example.com', eraseDeps());
    const requests = bed.ml.state.requests.length;
    const counter = countReads(db);
    try {
      for (let i = 0; i < 10; i += 1) {
        expect(await eraseAddress('kid@example.com', eraseDeps())).toEqual({
          signups: 0,
          mailerLite: 'unchanged',
        });
      }
    } finally {
      counter.stop();
    }
    expect(counter.reads / 10).toBe(2);
    expect(bed.ml.state.requests.length).toBe(requests);
  });

  it('counts reads as Firestore bills them (the counter this relies on)', async () => {
    await seedKidAndFriend();
    const counter = countReads(db);
    try {
      await db.collection(SIGNUPS).doc('none').get();
      await db.collection(SIGNUPS).where('email', '==', 'nobody@example.com').get();
      await db.collection(SIGNUPS).get();
    } finally {
      counter.stop();
    }
    expect(counter.reads).toBe(1 + 1 + 3);
  });

  it('a link limiter forgets a window once it has passed', () => {
    const limiter = new LinkLimiter(2, 1_000);
    expect([limiter.allow('t', 0), limiter.allow('t', 10), limiter.allow('t', 20)]).toEqual([
      true,
      true,
      false,
    ]);
    expect(limiter.allow('t', 1_011)).toBe(true);
  });
});
