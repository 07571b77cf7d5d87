// The one-click way out: the unsubscribe endpoint against the stand-ins (Firestore, MailerLite over
// loopback), the erasure it runs, and a sync that was holding the address when it ran.

import type { Firestore } from 'firebase-admin/firestore';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { MailerLiteStandIn } from '../../../dev/mailerlite/index.ts';
import {
  FINAL,
  type FirestoreHarness,
  HERO,
  mailerLiteClient,
  type RecordingLogger,
  recordingLogger,
  resetMailerLite,
  seedSignups,
  startFirestore,
  startMailerLite,
} from '../../test-support/stack';
import { handleSyncEmailsToMailerlite } from '../callables/sync-emails-to-mailerlite';
import { systemClock } from '../clock';
import { ERASURES, SIGNUPS, THANK_YOU_MAILS } from '../contract';
import {
  handleUnsubscribe,
  isOneClick,
  ONE_CLICK_BODY_LIMIT_BYTES,
  type UnsubscribeHttpRequest,
} from '../http/unsubscribe';
import { sha256Hex } from '../logs';
import {
  MailerLiteClient,
  type MailerLiteMethod,
  type MailerLiteResponse,
  type RequestOptions,
} from '../mailerlite/client';
import { clearGroupCache } from '../mailerlite/groups';
import { eraseAddress } from './erasure';
import { forgetPending } from './pending-forgets';
import { unsubscribeToken } from './unsubscribe-token';

let firestore: FirestoreHarness;
let db: Firestore;
let ml: MailerLiteStandIn;
let logger: RecordingLogger;

const SECRET = 'test-unsubscribe-secret';
const GROUPS = { updates: 'GOODY launch updates', club: 'GOODY Club' };

beforeAll(async () => {
  [firestore, ml] = await Promise.all([startFirestore(), startMailerLite()]);
  db = firestore.db;
});
afterAll(async () => {
  await Promise.all([firestore.stop(), ml.stop()]);
});
beforeEach(async () => {
  await firestore.reset();
  resetMailerLite(ml);
  clearGroupCache();
  logger = recordingLogger();
});

function eraseDeps() {
  return { db, client: mailerLiteClient(ml), clock: systemClock, logger, secret: SECRET };
}

function unsubscribe(request: Partial<UnsubscribeHttpRequest> & { method: string }) {
  return handleUnsubscribe(
    { query: {}, ...request },
    {
      secret: SECRET,
      contact: 'hello@goody.example',
      logger,
      erase: (email) => eraseAddress(email, eraseDeps()),
    },
  );
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
    await mailerLiteClient(ml).upsertSubscriber({ email });
  }
  await db.collection(THANK_YOU_MAILS).doc(sha256Hex('kid@example.com')).set({ state: 'sent' });
}

describe('the unsubscribe link', () => {
  it('GET shows a page with one Unsubscribe button, erases nothing, and sends strict headers', async () => {
    await seedKidAndFriend();
    const response = await unsubscribe({
      method: 'GET',
      query: { ...unsubscribeToken(SECRET, 'Kid@Example.com') },
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
    expect(ml.state.subscribers.map((s) => s.email).sort()).toEqual([
      'friend@example.com',
      'kid@example.com',
    ]);
    expect(ml.state.requests.filter((r) => r.path.startsWith('/api/'))).toHaveLength(2);
  });

  it('POST List-Unsubscribe=One-Click erases both forms of the address, the thank-you record and the MailerLite subscriber; a second POST answers the same', async () => {
    await seedKidAndFriend();
    const query = { ...unsubscribeToken(SECRET, 'Kid@Example.com') };
    const first = await unsubscribe({ method: 'POST', query, body: ONE_CLICK });
    expect(first.status).toBe(200);
    expect(first.body).toContain('<h1>You’re unsubscribed</h1>');
    expect(await emailsStored()).toEqual(['friend@example.com']);
    expect(ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
    expect((await db.collection(THANK_YOU_MAILS).doc(sha256Hex('kid@example.com')).get()).exists).toBe(false);
    expect(
      ml.state.requests.map((r) => `${r.method} ${r.path.split('/').slice(0, 3).join('/')} ${r.status}`),
    ).toContain('POST /api/subscribers 200');
    expect(logger.entries.find((entry) => entry.event === 'unsubscribe.erased')?.fields).toMatchObject({
      email_masked: 'k***@e***.com',
      signups: 2,
      mailerlite: 'forgotten',
      thank_you_record: true,
    });
    expect(logger.text()).not.toMatch(/kid@example\.com/i);

    const second = await unsubscribe({ method: 'POST', query, body: ONE_CLICK });
    expect(second).toEqual(first);
    expect(await emailsStored()).toEqual(['friend@example.com']);
  });

  it('takes the one-click body as mail providers send it: raw urlencoded, or multipart', async () => {
    await seedKidAndFriend();
    const query = { ...unsubscribeToken(SECRET, 'friend@example.com') };
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
    const kid = { ...unsubscribeToken(SECRET, 'kid@example.com') };
    expect((await unsubscribe({ method: 'POST', query: kid, rawBody: Buffer.from(multipart) })).status).toBe(
      200,
    );
    // The link names kid@example.com; the row stored as Kid@Example.com is the same person's.
    expect(await emailsStored()).toEqual([]);
  });

  it('refuses a body larger than a one-click POST needs (413), and erases nothing', async () => {
    await seedKidAndFriend();
    const query = { ...unsubscribeToken(SECRET, 'friend@example.com') };
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
        a: unsubscribeToken(SECRET, 'kid@example.com').a,
        t: unsubscribeToken(SECRET, 'friend@example.com').t,
      }),
    ],
    [
      'a flipped character in the seal',
      () => {
        const { a, t } = unsubscribeToken(SECRET, 'kid@example.com');
        return { a: `${a.slice(0, 10)}${a[10] === 'A' ? 'B' : 'A'}${a.slice(11)}`, t };
      },
    ],
    ['a truncated MAC', () => ({ ...unsubscribeToken(SECRET, 'kid@example.com'), t: 'abc' })],
    ['arrays', () => ({ a: ['x'], t: ['y'] })],
  ])('refuses %s with 400 and erases nothing', async (_, query) => {
    await seedKidAndFriend();
    for (const method of ['GET', 'POST']) {
      const response = await unsubscribe({ method, query: query(), body: ONE_CLICK });
      expect(response.status).toBe(400);
      expect(response.body).toContain('<h1>This link doesn’t work</h1>');
    }
    expect(await emailsStored()).toEqual(['Kid@Example.com', 'friend@example.com', 'kid@example.com']);
    expect(ml.state.subscribers).toHaveLength(2);
    expect(logger.events()).toEqual(['unsubscribe.refused_token', 'unsubscribe.refused_token']);
  });

  it('a POST without the one-click body erases nothing and offers the button', async () => {
    await seedKidAndFriend();
    const query = { ...unsubscribeToken(SECRET, 'kid@example.com') };
    const response = await unsubscribe({ method: 'POST', query, body: {} });
    expect(response.status).toBe(400);
    expect(response.body).toContain('<button type="submit">Unsubscribe</button>');
    expect(await emailsStored()).toHaveLength(3);
  });

  it('other methods: 405 with Allow', async () => {
    const response = await unsubscribe({
      method: 'DELETE',
      query: { ...unsubscribeToken(SECRET, 'kid@example.com') },
    });
    expect(response.status).toBe(405);
    expect(response.headers.Allow).toBe('GET, HEAD, POST');
  });

  it('a failing database: 503 with the button to try again', async () => {
    const response = await handleUnsubscribe(
      { method: 'POST', query: { ...unsubscribeToken(SECRET, 'kid@example.com') }, body: ONE_CLICK },
      {
        secret: SECRET,
        contact: 'hello@goody.example',
        logger,
        erase: () => Promise.reject(new Error('Firestore unavailable')),
      },
    );
    expect(response.status).toBe(503);
    expect(response.body).toContain('<button type="submit">Unsubscribe</button>');
    expect(logger.entries.map((entry) => entry.event)).toEqual(['unsubscribe.failed']);
  });
});

describe('MailerLite down during an erasure', () => {
  function pendingForgets() {
    return forgetPending({ db, client: mailerLiteClient(ml), secret: SECRET, logger });
  }

  async function tombstoneOfKid() {
    return (await db.collection(ERASURES).doc(sha256Hex('kid@example.com')).get()).data() ?? {};
  }

  it('the click is enough: Firestore is erased at once, and the forget is retried until MailerLite answers', async () => {
    await seedKidAndFriend();
    const query = { ...unsubscribeToken(SECRET, 'Kid@Example.com') };
    ml.faults.down = true;
    const response = await unsubscribe({ method: 'POST', query, body: ONE_CLICK });
    expect(response.status).toBe(200);
    expect(response.body).toContain('<h1>You’re unsubscribed</h1>');
    expect(response.body).toContain('we’ll delete it there as soon as it does');
    expect(await emailsStored()).toEqual(['friend@example.com']);

    // The tombstone holds the address sealed, never in clear.
    const tombstone = await tombstoneOfKid();
    expect(tombstone.forget_pending).toBe(true);
    expect(JSON.stringify(tombstone)).not.toMatch(/kid@example\.com/i);

    // Still down: nothing changes, it stays pending.
    expect(await pendingForgets()).toEqual({ forgotten: 0, superseded: 0, stillPending: 1, unopenable: 0 });
    expect((await tombstoneOfKid()).forget_pending).toBe(true);

    ml.faults.down = false;
    expect(await pendingForgets()).toEqual({ forgotten: 1, superseded: 0, stillPending: 0, unopenable: 0 });
    expect(ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
    const done = await tombstoneOfKid();
    expect(done.forget_pending).toBeUndefined();
    expect(done.forget_token).toBeUndefined();
    expect(done.erased_at).toBeDefined();
    // Nothing left to do on the next run.
    expect(await pendingForgets()).toEqual({ forgotten: 0, superseded: 0, stillPending: 0, unopenable: 0 });
    expect(logger.text()).not.toMatch(/kid@example\.com/i);
  });

  it('a sign-up made again after the erasure is a new consent: the old forget is dropped', async () => {
    await seedKidAndFriend();
    ml.faults.down = true;
    await unsubscribe({
      method: 'POST',
      query: { ...unsubscribeToken(SECRET, 'kid@example.com') },
      body: ONE_CLICK,
    });
    ml.faults.down = false;
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }], Date.now() + 1_000);

    expect(await pendingForgets()).toEqual({ forgotten: 0, superseded: 1, stillPending: 0, unopenable: 0 });
    expect(ml.state.subscribers.map((s) => s.email).sort()).toEqual([
      'friend@example.com',
      'kid@example.com',
    ]);
    expect((await tombstoneOfKid()).forget_pending).toBeUndefined();
  });

  it('a token sealed with another secret stays pending and is reported, erasing nothing', async () => {
    await db
      .collection(ERASURES)
      .doc(sha256Hex('kid@example.com'))
      .set({
        erased_at: new Date(),
        forget_pending: true,
        forget_token: unsubscribeToken('a-rotated-secret', 'kid@example.com'),
      });
    await seedKidAndFriend();
    expect(await pendingForgets()).toEqual({ forgotten: 0, superseded: 0, stillPending: 0, unopenable: 1 });
    expect(ml.state.subscribers).toHaveLength(2);
    expect(logger.entries.at(-1)).toMatchObject({ severity: 'error', event: 'forget_pending.run' });
  });
});

/** The real client, which runs `beforeBatch` once, just before its next POST /batch leaves. */
class ClientWithHook extends MailerLiteClient {
  beforeBatch: (() => Promise<void>) | undefined;

  override async request<T>(
    method: MailerLiteMethod,
    path: string,
    body?: unknown,
    options?: RequestOptions,
  ): Promise<MailerLiteResponse<T>> {
    if (method === 'POST' && path === '/batch') {
      const hook = this.beforeBatch;
      this.beforeBatch = undefined;
      await hook?.();
    }
    return super.request<T>(method, path, body, options);
  }
}

describe('an erasure while a sync runs', () => {
  const syncWith = (client: MailerLiteClient) =>
    handleSyncEmailsToMailerlite(null, {
      db,
      client,
      groups: GROUPS,
      clock: systemClock,
      logger,
      deadline: Date.now() + 540_000,
      unsubscribeSecret: SECRET,
    });

  const hookedClient = () =>
    new ClientWithHook({ apiKey: ml.apiKey, baseUrl: ml.baseUrl, backoffBaseMs: 20, timeoutMs: 2_000 });

  it('is not undone by the batch that was on its way: the sync forgets the address again', async () => {
    await seedKidAndFriend();
    const client = hookedClient();
    // The sync has read kid's sign-ups and is sending them; the erasure lands first.
    client.beforeBatch = async () => {
      await eraseAddress('Kid@Example.com', eraseDeps());
      expect(ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
    };
    const reply = await syncWith(client);
    expect(reply).toMatchObject({ success: true });
    expect(ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
    expect(await emailsStored()).toEqual(['friend@example.com']);
    expect(logger.events()).toContain('sync.erased_contact_forgotten');
  });

  it('when MailerLite refuses that second forget, leaves it pending on the tombstone, and the job finishes it', async () => {
    await seedKidAndFriend();
    const client = hookedClient();
    client.beforeBatch = async () => {
      await eraseAddress('Kid@Example.com', eraseDeps());
      // From here MailerLite answers no look-up of a subscriber: the sync's forget cannot go through.
      ml.faults.failNext(20, 500, undefined, { method: 'GET', pathPrefix: '/api/subscribers/' });
    };
    await syncWith(client);
    expect(ml.state.subscribers.map((s) => s.email).sort()).toEqual([
      'friend@example.com',
      'kid@example.com',
    ]);
    const tombstone = (await db.collection(ERASURES).doc(sha256Hex('kid@example.com')).get()).data() ?? {};
    expect(tombstone.forget_pending).toBe(true);
    expect(JSON.stringify(tombstone)).not.toMatch(/kid@example\.com/i);

    ml.faults.clear();
    expect(await forgetPending({ db, client: mailerLiteClient(ml), secret: SECRET, logger })).toMatchObject({
      forgotten: 1,
    });
    expect(ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
  });

  it('a sync that finds MailerLite working finishes the forgets left pending before it', async () => {
    await seedKidAndFriend();
    ml.faults.down = true;
    await eraseAddress('kid@example.com', eraseDeps());
    ml.faults.down = false;
    expect(ml.state.subscribers.map((s) => s.email).sort()).toEqual([
      'friend@example.com',
      'kid@example.com',
    ]);

    expect(await syncWith(hookedClient())).toMatchObject({ success: true, synced: 1 });
    expect(ml.state.subscribers.map((s) => s.email)).toEqual(['friend@example.com']);
    expect(
      (await db.collection(ERASURES).doc(sha256Hex('kid@example.com')).get()).get('forget_pending'),
    ).toBe(undefined);
    expect(logger.entries.find((entry) => entry.event === 'forget_pending.run')?.fields).toMatchObject({
      forgotten: 1,
    });
  });

  it('skips an address erased after the sync read it and before its step: never sent at all', async () => {
    // 60 people: two batches of 50 and 10; kid is in the second, read ahead during the first.
    const people = Array.from({ length: 59 }, (_, i) => ({ email: `p${i}@example.com`, ...HERO }));
    await seedSignups(db, [...people, { email: 'kid@example.com', ...HERO }], Date.now() - 60_000);
    const client = hookedClient();
    client.beforeBatch = () => eraseAddress('kid@example.com', eraseDeps()).then(() => undefined);
    const reply = await syncWith(client);
    expect(reply).toMatchObject({ success: true, synced: 59 });
    expect(ml.state.subscribers.map((s) => s.email)).not.toContain('kid@example.com');
    expect(ml.state.subscribers).toHaveLength(59);
    expect(logger.events()).toContain('sync.erased_contact_skipped');
    expect(logger.events()).not.toContain('sync.erased_contact_forgotten');
  });

  it('does not hold back a sign-up made again after the erasure', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }], Date.now() - 60_000);
    await eraseAddress('kid@example.com', eraseDeps());
    await seedSignups(db, [
      { email: 'kid@example.com', ...FINAL },
      { email: 'friend@example.com', ...HERO },
    ]);
    const reply = await syncWith(hookedClient());
    expect(reply).toMatchObject({ success: true, synced: 2 });
    expect(ml.state.subscribers.map((s) => s.email).sort()).toEqual([
      'friend@example.com',
      'kid@example.com',
    ]);
    expect((await db.collection(ERASURES).get()).size).toBe(1);
  });

  it('sends each new subscriber with its first sign-up time as opted_in_at', async () => {
    const at = Date.UTC(2026, 2, 1, 12, 0, 0);
    await seedSignups(
      db,
      [
        { email: 'kid@example.com', ...HERO },
        { email: 'kid@example.com', ...FINAL },
        { email: 'friend@example.com', ...HERO },
      ],
      at,
    );
    await syncWith(hookedClient());
    expect(ml.state.subscribers.map((s) => [s.email, s.optedInAt]).sort()).toEqual([
      ['friend@example.com', '2026-03-01 12:00:00'],
      ['kid@example.com', '2026-03-01 12:00:00'],
    ]);
  });
});
