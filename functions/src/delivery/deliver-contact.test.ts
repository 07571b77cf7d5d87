import { describe, expect, it } from 'vitest';
import { testBed } from '../../test-support/bed';
import { recordingLogger } from '../../test-support/logs';
import {
  contactWorkerDeps,
  deleteGroupInMailerLite,
  GROUPS,
  groupRequests,
  mailerLiteClient,
  resetMailerLiteOverHttp,
} from '../../test-support/mailerlite';
import {
  FINAL,
  HERO,
  MAILBOX_SECRET,
  seedSignups,
  suppressMailbox,
  taskFor,
  testMailboxes,
} from '../../test-support/signups';
import { recordingEnqueue } from '../../test-support/tasks';
import { systemClock } from '../clock';
import type { MailerLiteClientOptions } from '../mailerlite/client';
import { mailerLiteTime } from '../mailerlite/client';
import { eraseAddress } from '../privacy/erasure';
import { finishErasureLater } from '../privacy/finish-erasure';
import { mailboxKey } from '../privacy/mailbox-key';
import {
  CONTACT_ROWS_READ,
  contactConcurrency,
  type DeliverContactDeps,
  handleDeliverContact,
} from './deliver-contact';
import { GIVE_UP_SLACK_MS } from './part-life';
import { ERASURE_QUEUE, RETRY, RetryLater, retryWindowMs } from './queue';

const bed = testBed({ mailerLite: true });
const { db } = bed;

const suppress = (email: string) => suppressMailbox(db, email);
const deps = (client: Partial<MailerLiteClientOptions> = {}, extra: Partial<DeliverContactDeps> = {}) =>
  contactWorkerDeps(bed, client, extra);

type ContactBody = { email: string; source: string; subscription_type?: string };

/** Runs the task the row's trigger enqueues for the latest stored sign-up of this spelling and list. */
async function deliver(body: ContactBody, taskDeps: DeliverContactDeps = deps()) {
  const list = body.source === 'final_cta' ? 'club' : 'updates';
  return handleDeliverContact(await taskFor(db, body.email, list), taskDeps);
}

/** Stores the sign-up the body names, as the page does before it calls, then runs its task. */
async function add(body: ContactBody, taskDeps: DeliverContactDeps = deps()) {
  await seedSignups(db, [{ email: body.email, ...(body.source === 'final_cta' ? FINAL : HERO) }]);
  return deliver(body, taskDeps);
}

/** What each upsert MailerLite confirmed did, from the logs: the reply no longer says. */
const upsertStatuses = () =>
  bed.logger.entries
    .filter((entry) => entry.event === 'add_contact.upserted')
    .map((entry) => entry.fields.status);

/**
 * A task that failed downstream, logged with the code the failure maps to: only the address refused
 * (invalid-argument) ends the part (`refused`); anything else is thrown back to Cloud Tasks (RetryLater), a
 * retry that can fix it (unavailable) as it is, our setup or MailerLite refusing us (failed-precondition,
 * internal) with the part waiting, `configuration`.
 */
async function expectFailure(call: Promise<unknown>, code: string): Promise<{ message: unknown }> {
  if (code === 'invalid-argument') expect(await call).toBe('refused');
  else {
    const thrown = await call.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(thrown).toBeInstanceOf(RetryLater);
    expect((thrown as RetryLater).wait).toBe(code === 'unavailable' ? undefined : 'configuration');
  }
  const failure = bed.logger.entries.filter((entry) => entry.event === 'add_contact.failed').at(-1);
  expect(failure?.fields.code, 'the logged failure').toBe(code);
  return { message: failure?.fields.message };
}

const hero = (email: string) => ({ email, source: 'hero_form' });
const final = (email: string) => ({ email, source: 'final_cta', subscription_type: 'club' });

function groupName(id: string): string | undefined {
  return bed.ml.state.groups.find((group) => group.id === id)?.name;
}

function subscriber(email: string) {
  const found = bed.ml.state.subscribers.find((s) => s.email === email);
  return found && { ...found, groupNames: found.groups.map(groupName).sort() };
}

/**
 * Waits until the stand-in has logged `count` API requests: it logs a request when it answers, so
 * one the client abandoned would otherwise land in the next test's log.
 */
async function drained(count: number): Promise<void> {
  await expect.poll(() => apiRequests().length, { timeout: 10_000, interval: 50 }).toBe(count);
}

const apiRequests = () => bed.ml.state.requests.filter((request) => request.path.startsWith('/api/'));

/** The API requests since the first `skip`, as "METHOD path status" with the query left out. */
const requestsSince = (skip: number) =>
  apiRequests()
    .slice(skip)
    .map((request) => `${request.method} ${request.path.split('?')[0]} ${request.status}`);

/** The contact part of the delivery state on the latest row of this spelling. */
async function contactPart(email: string) {
  const { signup } = await taskFor(db, email);
  const row = await db.collection('email_subscriptions').doc(signup).get();
  return row.get('delivery.contact') as
    | (Record<string, unknown> & { due_at: { toMillis(): number } })
    | undefined;
}

const groupId = (name: string) => bed.ml.state.groups.find((group) => group.name === name)?.id;

describe('deliver-contact (the task add-contact-to-mailerlite enqueues)', () => {
  it('puts a hero sign-up into the updates group, with its source, and says it created it', async () => {
    const result = await add(hero('Kid@Example.com'), deps());
    expect(result).toBe('delivered');
    expect(upsertStatuses()).toEqual(['created']);
    expect(subscriber('kid@example.com')).toMatchObject({
      status: 'active',
      fields: { source: 'hero_form' },
      groupNames: ['GOODY launch updates'],
    });
  });

  it('adds a club sign-up of the same person to the club group and keeps the updates group', async () => {
    await add(hero('kid@example.com'), deps());
    const result = await add(final('KID@example.com'), deps());
    expect(result).toBe('delivered');
    expect(upsertStatuses()).toEqual(['created', 'updated']);
    expect(bed.ml.state.subscribers).toHaveLength(1);
    expect(subscriber('kid@example.com')).toMatchObject({
      fields: { source: 'final_cta' },
      groupNames: ['GOODY Club', 'GOODY launch updates'],
    });
  });

  it('uses configured group ids without looking anything up', async () => {
    const updates = bed.ml.addGroup('Launch list');
    const club = bed.ml.addGroup('Club list');
    await add(final('kid@example.com'), deps({}, { groups: { updates, club } }));
    expect(subscriber('kid@example.com')?.groups).toEqual([club]);
    expect(apiRequests().map((request) => `${request.method} ${request.path}`)).toEqual([
      'POST /api/subscribers',
    ]);
  });

  it('resolves each group name once per instance: later calls answer from the cache', async () => {
    await add(hero('one@example.com'), deps());
    await add(final('two@example.com'), deps());
    await add(hero('three@example.com'), deps());
    await add(final('one@example.com'), deps());
    expect(groupRequests(bed.ml)).toEqual({ lookups: 2, creations: 2 });
    expect(apiRequests().filter((request) => request.path === '/api/subscribers')).toHaveLength(4);
  });

  describe('when the cached group no longer exists in MailerLite', () => {
    it('deleted: resolves the name again, creates the group anew, delivers, and caches the new id', async () => {
      await add(hero('first@example.com'), deps());
      const deleted = groupId(GROUPS.updates) as string;
      await deleteGroupInMailerLite(bed.ml, deleted);
      const before = apiRequests().length;

      const result = await add(hero('second@example.com'), deps());
      expect(result).toBe('delivered');
      expect(upsertStatuses()).toEqual(['created', 'created']);
      const recreated = groupId(GROUPS.updates);
      expect(recreated).toBeDefined();
      expect(recreated).not.toBe(deleted);
      expect(subscriber('second@example.com')?.groups).toEqual([recreated]);
      expect(requestsSince(before)).toEqual([
        'POST /api/subscribers 422',
        'GET /api/groups 200',
        'POST /api/groups 201',
        'POST /api/subscribers 201',
      ]);
      expect(bed.logger.entries).toContainEqual({
        severity: 'warn',
        event: 'mailerlite.group_re_resolved',
        fields: { subscription_type: 'updates', refused_group_id: deleted, group_id: recreated },
      });

      // The new id is cached like the first: no look-up, no refusal.
      const next = apiRequests().length;
      await add(hero('third@example.com'), deps());
      expect(requestsSince(next)).toEqual(['POST /api/subscribers 201']);
    });

    it('the account reset (the stand-in emptied over its HTTP control): delivers into a new group', async () => {
      await add(final('first@example.com'), deps());
      await resetMailerLiteOverHttp(bed.ml);
      expect(bed.ml.state.groups).toEqual([]);

      const result = await add(final('second@example.com'), deps());
      expect(result).toBe('delivered');
      expect(upsertStatuses()).toEqual(['created', 'created']);
      expect(subscriber('second@example.com')?.groupNames).toEqual([GROUPS.club]);
      expect(groupRequests(bed.ml)).toEqual({ lookups: 1, creations: 1 });
    });

    it('calls refused at the same time share one look-up and create one group', async () => {
      await add(hero('first@example.com'), deps());
      await deleteGroupInMailerLite(bed.ml, groupId(GROUPS.updates) as string);
      const before = groupRequests(bed.ml);

      const emails = ['a', 'b', 'c', 'd', 'e'].map((name) => `${name}@example.com`);
      const results = await Promise.all(emails.map((email) => add(hero(email), deps())));
      expect(results).toEqual(emails.map(() => 'delivered'));
      expect(upsertStatuses()).toEqual(['created', ...emails.map(() => 'created')]);
      expect(bed.ml.state.groups.filter((group) => group.name === GROUPS.updates)).toHaveLength(1);
      const after = groupRequests(bed.ml);
      expect({
        lookups: after.lookups - before.lookups,
        creations: after.creations - before.creations,
      }).toEqual({ lookups: 1, creations: 1 });
      for (const email of emails) expect(subscriber(email)?.groupNames).toEqual([GROUPS.updates]);
    });

    it('refused though MailerLite still lists it: failed-precondition, and no second upsert', async () => {
      bed.ml.faults.failNext(
        1,
        422,
        {
          message: 'The given data was invalid.',
          errors: { 'groups.0': ['The selected groups.0 is invalid.'] },
        },
        { pathPrefix: '/api/subscribers' },
      );
      const error = await expectFailure(add(hero('kid@example.com'), deps()), 'failed-precondition');
      expect(error.message).toBe(
        "MailerLite refused the server's configuration (groups.0): The given data was invalid.",
      );
      expect(apiRequests().filter((request) => request.path === '/api/subscribers')).toHaveLength(1);
      // Looked up twice (the first resolution, then once more after the refusal), created once.
      expect(groupRequests(bed.ml)).toEqual({ lookups: 2, creations: 1 });
      expect(bed.logger.events()).toEqual(['add_contact.failed']);
    });
  });

  it('logs what happened with the address masked and hashed, never in clear', async () => {
    await add(hero('kid.teen@example.com'), deps());
    expect(bed.logger.entries).toEqual([
      {
        severity: 'info',
        event: 'add_contact.upserted',
        fields: expect.objectContaining({
          email_masked: 'k***@e***.com',
          status: 'created',
          source: 'hero_form',
        }),
      },
    ]);
    // A keyed handle (the mailbox key's first 12 characters), not a hash anyone could recompute.
    expect(bed.logger.entries[0]?.fields.email_hash).toBe(
      mailboxKey(MAILBOX_SECRET, 'kid.teen@example.com').slice(0, 12),
    );
    expect(bed.logger.text()).not.toContain('kid.teen@example.com');
  });

  describe('when MailerLite fails', () => {
    it('401: failed-precondition, saying the key was refused (and never showing it)', async () => {
      const error = await expectFailure(
        add(hero('kid@example.com'), deps({ apiKey: 'revoked-key' })),
        'failed-precondition',
      );
      expect(error.message).toMatch(/API key was refused/);
      expect(bed.logger.text()).not.toContain('revoked-key');
      expect(bed.logger.events()).toEqual(['add_contact.failed']);
    });

    it('422 about the address: logged as invalid-argument, nothing stored', async () => {
      bed.ml.faults.failNext(
        1,
        422,
        {
          message: 'The email must be a valid email address.',
          errors: { email: ['The email must be a valid email address.'] },
        },
        { pathPrefix: '/api/subscribers' },
      );
      await expectFailure(add(hero('kid@example.com'), deps()), 'invalid-argument');
      expect(bed.ml.state.subscribers).toEqual([]);
    });

    it('429 with a short Retry-After: waits it out and succeeds', async () => {
      bed.ml.faults.failNext(1, 429, undefined, {
        headers: { 'Retry-After': '1' },
        pathPrefix: '/api/subscribers',
      });
      expect(await add(hero('kid@example.com'), deps())).toBe('delivered');
      expect(upsertStatuses()).toEqual(['created']);
    });

    it('429 with a Retry-After beyond its budget: given up at once, for Cloud Tasks to retry later', async () => {
      bed.ml.faults.failNext(1, 429, undefined, {
        headers: { 'Retry-After': '60' },
        pathPrefix: '/api/subscribers',
      });
      await expectFailure(add(hero('kid@example.com'), deps()), 'unavailable');
      expect(apiRequests().filter((request) => request.path === '/api/subscribers')).toHaveLength(1);
    });

    it('500 that persists: unavailable after one retry, thrown back to Cloud Tasks', async () => {
      bed.ml.faults.failNext(5, 500, undefined, { pathPrefix: '/api/subscribers' });
      await expectFailure(add(hero('kid@example.com'), deps()), 'unavailable');
      expect(apiRequests().filter((request) => request.path === '/api/subscribers')).toHaveLength(2);
      expect(bed.ml.state.subscribers).toEqual([]);
    });

    it('500 once: retried and delivered', async () => {
      bed.ml.faults.failNext(1, 500, undefined, { pathPrefix: '/api/subscribers' });
      expect(await add(hero('kid@example.com'), deps())).toBe('delivered');
      expect(upsertStatuses()).toEqual(['created']);
    });

    it('too slow: unavailable once the per-request timeout has passed twice', async () => {
      const groups = { updates: bed.ml.addGroup('Launch list'), club: bed.ml.addGroup('Club list') };
      bed.ml.faults.latencyMs = 1_500;
      await expectFailure(
        add(hero('kid@example.com'), deps({}, { groups, requestTimeoutMs: 200 })),
        'unavailable',
      );
      expect(bed.logger.entries.at(-1)?.fields).toMatchObject({
        error: 'MailerLiteTimeoutError',
        code: 'unavailable',
      });
      // The stand-in answers (and logs) both abandoned requests later: not in the next test's log.
      await drained(2);
    });

    it('too slow for its whole budget: unavailable within it', async () => {
      const groups = { updates: bed.ml.addGroup('Launch list'), club: bed.ml.addGroup('Club list') };
      bed.ml.faults.latencyMs = 3_000;
      await expectFailure(add(hero('kid@example.com'), deps({}, { groups, budgetMs: 500 })), 'unavailable');
      await drained(1);
    });

    it('unreachable: unavailable', async () => {
      bed.ml.faults.down = true;
      await expectFailure(add(hero('kid@example.com'), deps()), 'unavailable');
    });

    it('a configured group id that does not exist: failed-precondition naming the param; nothing looked up or created', async () => {
      const error = await expectFailure(
        add(hero('kid@example.com'), deps({}, { groups: { updates: '404', club: '405' } })),
        'failed-precondition',
      );
      expect(error.message).toBe(
        'MAILERLITE_GROUP_UPDATES is set to the group id 404, and MailerLite has no group with that id. Set it to the id of an existing group, or to a group name (looked up, and created if missing).',
      );
      expect(requestsSince(0)).toEqual(['POST /api/subscribers 422']);
      expect(bed.ml.state.groups).toEqual([]);
      expect(bed.ml.state.subscribers).toEqual([]);
      expect(bed.logger.entries.at(-1)?.fields).toMatchObject({
        error: 'MailerLiteConfiguredGroupError',
        code: 'failed-precondition',
      });
    });
  });

  it('drops a malformed task with one log line, reaching nothing', async () => {
    for (const task of [null, 'kid@example.com', { email: 'not an address', source: 'hero_form' }]) {
      expect(await handleDeliverContact(task, deps())).toBe('dropped');
    }
    expect(bed.ml.state.requests).toEqual([]);
    expect(bed.logger.events()).toEqual([
      'add_contact.task_malformed',
      'add_contact.task_malformed',
      'add_contact.task_malformed',
    ]);
  });

  describe('retried by Cloud Tasks', () => {
    it('after a transient MailerLite failure: the retry delivers, once', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      bed.ml.faults.down = true;
      await expect(deliver(hero('kid@example.com'))).rejects.toBeInstanceOf(RetryLater);
      bed.ml.faults.down = false;
      expect(await deliver(hero('kid@example.com'))).toBe('delivered');
      expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['kid@example.com']);
      expect(upsertStatuses()).toEqual(['created']);
    });

    it('our setup refused (the key, 401): the part waits, `configuration`, and the retry after the fix delivers it', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      const before = (await contactPart('kid@example.com'))?.due_at.toMillis();
      await expect(deliver(hero('kid@example.com'), deps({ apiKey: 'revoked-key' }))).rejects.toMatchObject({
        name: 'RetryLater',
        code: 'mailerlite 401',
        wait: 'configuration',
      });
      expect(bed.logger.events()).toEqual(['add_contact.failed']);
      const part = await contactPart('kid@example.com');
      expect(part).toMatchObject({
        state: 'pending',
        reason: 'configuration',
        attempts: 1,
        last_error: 'mailerlite 401',
      });
      // Retried by Cloud Tasks (at most 10 minutes apart), not an hour later by the reconciler, which looks again
      // soon after that task would have given up.
      expect(part?.due_at.toMillis()).toBeLessThan(before ?? 0);
      expect(part?.due_at.toMillis()).toBeLessThanOrEqual(
        Date.now() + retryWindowMs(RETRY) + GIVE_UP_SLACK_MS,
      );
      expect(await deliver(hero('kid@example.com'))).toBe('delivered');
      expect(await contactPart('kid@example.com')).toMatchObject({ state: 'done', attempts: 2 });
      expect(await contactPart('kid@example.com')).not.toHaveProperty('reason');
    });

    it.each([
      ['403', 403, { message: 'This action is unauthorized.' }],
      ['404', 404, { message: 'Not Found.' }],
      ['an answer not in its documented shapes (a proxy page)', 200, '<html>proxy</html>'],
    ])(
      "MailerLite answering %s: not the person's, so never skipped; the part waits and is delivered after the fix",
      async (_name, status, body) => {
        await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
        bed.ml.faults.failNext(3, status, body, { pathPrefix: '/api/subscribers' });
        await expect(deliver(hero('kid@example.com'))).rejects.toMatchObject({
          name: 'RetryLater',
          wait: 'configuration',
        });
        expect(await contactPart('kid@example.com')).toMatchObject({
          state: 'pending',
          reason: 'configuration',
        });
        bed.ml.faults.clear();
        expect(await deliver(hero('kid@example.com'))).toBe('delivered');
        expect(await contactPart('kid@example.com')).toMatchObject({ state: 'done' });
      },
    );

    it('a task whose row is gone (erased between the enqueue and the dispatch): nothing is sent', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      const task = await taskFor(db, 'kid@example.com');
      // What the unsubscribe link does: the sign-ups go, the mailbox goes on the suppression list.
      for (const doc of (await db.collection('email_subscriptions').get()).docs) await doc.ref.delete();
      await suppress('kid@example.com');
      expect(await handleDeliverContact(task, deps())).toBe('gone');
      expect(bed.ml.state.requests).toEqual([]);
      expect(bed.ml.state.subscribers).toEqual([]);
      expect(bed.logger.events()).toEqual(['add_contact.signup_gone']);
    });

    it('a task of a part already settled (an earlier round that ran late): one read, no MailerLite request', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      expect(await deliver(hero('kid@example.com'))).toBe('delivered');
      const requests = bed.ml.state.requests.length;
      expect(await deliver(hero('kid@example.com'))).toBe('settled');
      expect(bed.ml.state.requests).toHaveLength(requests);
    });
  });

  it('a task of a past round does nothing: one read, no MailerLite request, no write', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    const { signup } = await taskFor(db, 'kid@example.com');
    const ref = db.collection('email_subscriptions').doc(signup);
    await ref.update({ 'delivery.contact.round': 3 });
    const before = (await ref.get()).get('delivery.contact');
    expect(await handleDeliverContact({ signup, round: 2 }, deps())).toBe('stale');
    expect(bed.ml.state.requests).toEqual([]);
    expect((await ref.get()).get('delivery.contact')).toEqual(before);
    expect(await handleDeliverContact({ signup, round: 3 }, deps())).toBe('delivered');
  });

  describe('one MailerLite contact per mailbox (privacy/mailerlite-contacts.ts)', () => {
    it('two sign-ups of one mailbox and list make exactly one upsert; the second row is done by the record', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      expect(await deliver(hero('kid@example.com'))).toBe('delivered');
      await seedSignups(db, [{ email: 'Kid@Example.com', ...HERO }]);
      expect(await deliver(hero('Kid@Example.com'))).toBe('already_delivered');
      expect(await contactPart('Kid@Example.com')).toMatchObject({ state: 'done', attempts: 1 });
      expect(
        bed.ml.state.requests.filter((r) => r.method === 'POST' && r.path === '/api/subscribers'),
      ).toHaveLength(1);
    });

    it('two tasks at once for one mailbox: one pushes, the other comes back later and finds it delivered', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      const outcomes = await Promise.allSettled([
        deliver(hero('kid@example.com')),
        deliver(hero('kid@example.com')),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled' && o.value === 'delivered')).toHaveLength(1);
      const retried = outcomes.filter((o) => o.status === 'rejected');
      for (const outcome of retried) expect(outcome.reason).toBeInstanceOf(RetryLater);
      for (const _ of retried) expect(await deliver(hero('kid@example.com'))).toBe('settled');
      expect(bed.ml.state.subscribers).toHaveLength(1);
    });

    it('four spellings of one Gmail mailbox are one contact, under the first spelling pushed, in both groups', async () => {
      const spellings = ['kid.teen@gmail.com', 'kidteen+1@gmail.com', 'Kid.Teen+goody@googlemail.com'];
      for (const email of spellings) {
        await seedSignups(db, [{ email, ...HERO }]);
        expect(await deliver(hero(email))).toMatch(/delivered/);
      }
      await seedSignups(db, [{ email: 'kidteen+club@gmail.com', ...FINAL }]);
      expect(await deliver(final('kidteen+club@gmail.com'))).toBe('delivered');
      expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['kid.teen@gmail.com']);
      expect(bed.ml.state.subscribers[0]?.groups).toHaveLength(2);
    });

    it('a +tag spelling on any domain is the same contact', async () => {
      await seedSignups(db, [
        { email: 'kid@school-example.org', ...HERO },
        { email: 'kid+goody@school-example.org', ...HERO },
      ]);
      await deliver(hero('kid@school-example.org'));
      expect(await deliver(hero('kid+goody@school-example.org'))).toBe('already_delivered');
      expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['kid@school-example.org']);
    });

    it('moves to the bare spelling once it is stored after +tag ones: one subscriber, with their groups and the first consent time', async () => {
      const start = Date.UTC(2026, 0, 1);
      await seedSignups(
        db,
        [
          { email: 'kid+x@school-example.org', ...HERO },
          { email: 'kid+y@school-example.org', ...FINAL },
        ],
        start,
      );
      expect(await deliver(hero('kid+x@school-example.org'))).toBe('delivered');
      expect(await deliver(final('kid+y@school-example.org'))).toBe('delivered');
      expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['kid+x@school-example.org']);
      await seedSignups(db, [{ email: 'Kid@School-Example.org', ...HERO }], start + 60_000);
      const before = bed.ml.state.requests.length;
      expect(await deliver(hero('Kid@School-Example.org'))).toBe('delivered');
      expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['kid@school-example.org']);
      expect(subscriber('kid@school-example.org')).toMatchObject({
        status: 'active',
        groupNames: [GROUPS.club, GROUPS.updates].sort(),
        optedInAt: mailerLiteTime(start),
      });
      // The tagged subscriber read, the bare one upserted, the tagged one forgotten (found, then erased); the
      // stand-in's log masks the address.
      expect(
        bed.ml.state.requests.slice(before).map((r) => `${r.method} ${r.path.replace(/\d+/g, 'N')}`),
      ).toEqual([
        'GET /api/subscribers/k***@s***',
        'POST /api/subscribers',
        'GET /api/subscribers/k***@s***',
        'POST /api/subscribers/N/forget',
      ]);
      const record = await db
        .collection('mailerlite_contacts')
        .doc(mailboxKey(MAILBOX_SECRET, 'kid@school-example.org'))
        .get();
      expect(record.get('email')).toBe('kid@school-example.org');
      expect(bed.logger.events()).toContain('add_contact.moved_to_own_address');
      // Moved for good: another +tag, the bare one again, on either list, costs no request.
      await seedSignups(db, [
        { email: 'kid+z@school-example.org', ...FINAL },
        { email: 'kid@school-example.org', ...FINAL },
      ]);
      const moved = bed.ml.state.requests.length;
      expect(await deliver(final('kid+z@school-example.org'))).toBe('already_delivered');
      expect(await deliver(final('kid@school-example.org'))).toBe('already_delivered');
      expect(bed.ml.state.requests.length).toBe(moved);
      expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['kid@school-example.org']);
    });

    it("keeps the person's own unsubscribe (in MailerLite) when the contact moves to the bare spelling", async () => {
      await seedSignups(db, [{ email: 'kid+x@school-example.org', ...HERO }]);
      expect(await deliver(hero('kid+x@school-example.org'))).toBe('delivered');
      await mailerLiteClient(bed.ml).upsertSubscriber({
        email: 'kid+x@school-example.org',
        status: 'unsubscribed',
      });
      await seedSignups(db, [{ email: 'kid@school-example.org', ...FINAL }]);
      expect(await deliver(final('kid@school-example.org'))).toBe('delivered');
      expect(bed.ml.state.subscribers.map((s) => [s.email, s.status])).toEqual([
        ['kid@school-example.org', 'unsubscribed'],
      ]);
    });

    it('a move MailerLite fails half-way is finished by the next try, still one subscriber', async () => {
      await seedSignups(db, [{ email: 'kid+x@school-example.org', ...HERO }]);
      expect(await deliver(hero('kid+x@school-example.org'))).toBe('delivered');
      await seedSignups(db, [{ email: 'kid@school-example.org', ...HERO }]);
      // The bare subscriber is upserted, then MailerLite fails the forget of the tagged one.
      // (Twice: the client tries a 503 once more.)
      bed.ml.faults.failNext(2, 503, undefined, { method: 'POST', pathPrefix: '/api/subscribers/' });
      await expect(deliver(hero('kid@school-example.org'))).rejects.toBeInstanceOf(RetryLater);
      expect(bed.ml.state.subscribers.map((s) => s.email).sort()).toEqual([
        'kid+x@school-example.org',
        'kid@school-example.org',
      ]);
      expect(await deliver(hero('kid@school-example.org'))).toBe('delivered');
      expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['kid@school-example.org']);
    });

    it("rows a bot stored on the other list do not hide this list's sign-up", async () => {
      await seedSignups(db, [
        ...Array.from({ length: CONTACT_ROWS_READ + 5 }, () => ({ email: 'kid@example.com', ...FINAL })),
        { email: 'kid@example.com', ...HERO },
      ]);
      expect(await deliver(hero('kid@example.com'))).toBe('delivered');
    });
  });

  describe('a mailbox on the suppression list', () => {
    it.each([
      ['the same address', 'kid@gmail.com'],
      ['another spelling of the same Gmail mailbox', 'K.i.d+again@googlemail.com'],
    ])('signed up again (%s): stored, but not put back into MailerLite', async (_label, again) => {
      await suppress('kid@gmail.com');
      await seedSignups(db, [{ email: again, ...HERO }]);
      expect(await deliver(hero(again))).toBe('suppressed');
      expect(bed.ml.state.requests).toEqual([]);
      expect(await db.collection('email_subscriptions').count().get()).toSatisfy(
        (count: { data(): { count: number } }) => count.data().count === 1,
      );
      expect(bed.logger.events()).toEqual(['add_contact.suppressed']);
      expect(bed.logger.text()).not.toMatch(/kid@|googlemail/i);
    });

    it.each(['kid+1@school-example.org', 'kid+goody@school-example.org', 'Kid+Again@School-Example.org'])(
      'a school mailbox that unsubscribed, signed up again as %s (a +tag on a domain no list names): no contact',
      async (again) => {
        await suppress('kid@school-example.org');
        await seedSignups(db, [{ email: again, ...HERO }]);
        expect(await deliver(hero(again))).toBe('suppressed');
        expect(bed.ml.state.requests).toEqual([]);
      },
    );

    it('reads a bounded number of rows of an address, however many a bot stored', async () => {
      await seedSignups(
        db,
        Array.from({ length: CONTACT_ROWS_READ + 30 }, () => ({ email: 'kid@example.com', ...HERO })),
        Date.UTC(2026, 0, 1),
      );
      expect(await deliver(hero('kid@example.com'))).toBe('delivered');
      expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['kid@example.com']);
    });
  });

  describe('the row the task names', () => {
    it('sends the stored spelling, not anything a caller sent, and records the part done on the row', async () => {
      await seedSignups(db, [{ email: 'Kid.Name@School-Example.org', ...HERO }]);
      expect(await deliver(hero('Kid.Name@School-Example.org'))).toBe('delivered');
      expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['kid.name@school-example.org']);
      const part = await contactPart('Kid.Name@School-Example.org');
      expect(part).toMatchObject({ state: 'done', attempts: 1 });
      expect(part).not.toHaveProperty('due_at');
    });

    it('the address refused by MailerLite: the part skipped, refused, for good', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      bed.ml.faults.failNext(1, 422, { message: 'The email must be valid.', errors: { email: ['invalid'] } });
      expect(await deliver(hero('kid@example.com'))).toBe('refused');
      expect(await contactPart('kid@example.com')).toMatchObject({ state: 'skipped', reason: 'refused' });
    });

    it('a retried failure is counted on the row with its code, never an address', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      bed.ml.faults.down = true;
      await expect(deliver(hero('kid@example.com'))).rejects.toBeInstanceOf(RetryLater);
      bed.ml.faults.down = false;
      const part = await contactPart('kid@example.com');
      expect(part).toMatchObject({ attempts: 1 });
      expect(String(part?.last_error)).toMatch(/^mailerlite /);
      expect(JSON.stringify(part)).not.toContain('kid@');
    });

    it("sends the first sign-up time of the pairing as MailerLite's consent time (opted_in_at)", async () => {
      const signedUp = Date.UTC(2026, 0, 15, 9, 30, 5, 250);
      await seedSignups(
        db,
        [
          { email: 'kid@example.com', ...HERO },
          { email: 'Kid@example.com', ...HERO },
        ],
        signedUp,
      );
      await deliver(hero('kid@example.com'));
      expect(bed.ml.state.subscribers.map((s) => [s.email, s.optedInAt])).toEqual([
        ['kid@example.com', '2026-01-15 09:30:05'],
      ]);
      expect(mailerLiteTime(signedUp)).toBe('2026-01-15 09:30:05');
    });

    it('forgets the contact again when the person unsubscribed while the call was pushing it', async () => {
      const groups = { updates: bed.ml.addGroup('Launch list'), club: bed.ml.addGroup('Club list') };
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }], Date.now() - 1_000);
      bed.ml.faults.latencyMs = 600;
      const call = deliver(hero('kid@example.com'), deps({}, { groups }));
      // The sign-up has been read and the upsert is on its way: the erasure happens now (its own
      // forget found nothing yet in MailerLite), leaving the mailbox on the suppression list.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await suppress('kid@example.com');
      expect(await call).toBe('delivered');
      bed.ml.faults.latencyMs = 0;
      expect(bed.ml.state.subscribers).toEqual([]);
      expect(bed.logger.events()).toEqual(['add_contact.upserted', 'add_contact.erased_during_call']);
    });

    it('an erasure that lands between the suppression check and the claim, the task then dying after its push: nothing of the mailbox stays in MailerLite', async () => {
      const groups = { updates: bed.ml.addGroup('Launch list'), club: bed.ml.addGroup('Club list') };
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }], Date.now() - 1_000);
      const client = mailerLiteClient(bed.ml);
      const mailboxes = testMailboxes(db);
      const realClaim = mailboxes.contacts.claim.bind(mailboxes.contacts);
      // The person clicks the unsubscribe link after the task checked the list, before it claims the record.
      mailboxes.contacts.claim = async (...args) => {
        await eraseAddress('kid@example.com', {
          db,
          client,
          clock: systemClock,
          logger: recordingLogger(),
          mailboxes: testMailboxes(db),
        });
        return realClaim(...args);
      };
      // And the task dies right after MailerLite took its push, before its check after the push.
      const dying = Object.create(client) as typeof client;
      dying.upsertSubscriber = async (...args) => {
        await client.upsertSubscriber(...args);
        throw new Error('The instance died.');
      };
      const outcome = await deliver(
        hero('kid@example.com'),
        deps({}, { groups, mailboxes, client: dying }),
      ).catch((error: unknown) => error);
      expect(outcome).toBe('suppressed');
      expect(bed.ml.state.subscribers).toEqual([]);
    });

    it('when MailerLite refuses that forget, leaves it pending on the suppression entry (address sealed) and hands it to its finish task', async () => {
      const groups = { updates: bed.ml.addGroup('Launch list'), club: bed.ml.addGroup('Club list') };
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }], Date.now() - 1_000);
      bed.ml.faults.latencyMs = 600;
      const queue = recordingEnqueue();
      const mailboxes = testMailboxes(db, finishErasureLater(queue.enqueue, systemClock));
      const call = deliver(hero('kid@example.com'), deps({}, { groups, mailboxes }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const entry = await suppress('kid@example.com');
      // The upsert is answered; every look-up of a subscriber after it fails.
      bed.ml.faults.failNext(10, 500, undefined, { method: 'GET', pathPrefix: '/api/subscribers/' });
      expect(await call).toBe('delivered');
      bed.ml.faults.latencyMs = 0;
      bed.ml.faults.clear();
      expect(bed.ml.state.subscribers.map((s) => s.email)).toEqual(['kid@example.com']);
      const left = (await entry.get()).data() ?? {};
      expect(left.pending).toBe(true);
      expect(JSON.stringify(left)).not.toMatch(/kid@example\.com/i);
      expect(bed.logger.entries.at(-1)).toMatchObject({
        event: 'add_contact.erased_during_call',
        fields: { forget: 'pending', finish_task: 'enqueued' },
      });
      // The entry's finish task, naming the entry alone, retries the forget until MailerLite answers.
      expect(queue.tasks.map(({ queue, payload }) => ({ queue, payload }))).toEqual([
        { queue: ERASURE_QUEUE, payload: { entry: entry.id } },
      ]);
      expect(JSON.stringify(queue.tasks)).not.toMatch(/kid/i);
    });
  });
});

describe("the contact queue's concurrency", () => {
  it('keeps enough tasks in flight for its rate while each takes up to 3 s, and at least 6', () => {
    expect(contactConcurrency(115)).toBe(6);
    expect(contactConcurrency(60)).toBe(6);
    // A benchmark's minute compressed 4 times: the same headroom per task.
    expect(contactConcurrency(460)).toBe(23);
    expect(contactConcurrency(1150)).toBe(58);
  });
});
