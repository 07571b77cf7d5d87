import type { Query } from 'firebase-admin/firestore';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { expectHttpsError } from '../../test-support/callables';
import { clockAhead } from '../../test-support/logs';
import {
  deleteGroupInMailerLite,
  groupRequests,
  repeatedUpserts,
  resetMailerLiteOverHttp,
} from '../../test-support/mailerlite';
import { FINAL, HERO, seedSignups } from '../../test-support/signups';
import {
  confirmed,
  confirmedPairs,
  contactsSent,
  db,
  deps,
  expectAllSevenHundredDelivered,
  finished,
  firestore,
  freshLogger,
  GROUPS,
  logger,
  ml,
  sync,
  syncState,
  TEST_LIMITS,
  thousandSignups,
  useSyncHarness,
} from '../../test-support/sync-harness';
import { systemClock } from '../clock';
import type { SyncReply } from '../contract';
import { MAX_SKIP_PAGE, PAGES_PER_STEP } from '../sync/pages';
import { SYNC_STATE_COLLECTION } from '../sync/state';
import { handleSyncEmailsToMailerlite } from './sync-callable';

useSyncHarness();

describe('sync-emails-to-mailerlite', () => {
  describe('when a cached group no longer exists in MailerLite', () => {
    const groupId = (name: string) => ml.state.groups.find((group) => group.name === name)?.id as string;

    /** (address, subscription type) pairs confirmed, with `typeOf` naming each group id ever used. */
    function confirmedTypePairs(typeOf: Map<string, string>): string[] {
      return confirmed.flatMap(({ email, groups }) => groups.map((id) => `${typeOf.get(id)} ${email}`));
    }

    it('resolves the names once per instance: a second run looks nothing up', async () => {
      await seedSignups(db, [
        { email: 'kid@example.com', ...HERO },
        { email: 'teen@example.com', ...FINAL },
      ]);
      expect(await sync()).toMatchObject({ success: true, synced: 2 });
      expect(groupRequests(ml)).toEqual({ lookups: 2, creations: 2 });
      await seedSignups(db, [{ email: 'newcomer@example.com', ...FINAL }]);
      expect(await sync()).toMatchObject({ success: true, synced: 1 });
      expect(groupRequests(ml)).toEqual({ lookups: 2, creations: 2 });
      expect(logger.events()).not.toContain('mailerlite.group_re_resolved');
    });

    it('the account reset between two runs: the next run creates both groups anew and delivers everything', async () => {
      await seedSignups(db, [{ email: 'early@example.com', ...HERO }]);
      expect(await sync()).toMatchObject({ success: true, synced: 1 });
      await resetMailerLiteOverHttp(ml);
      confirmed.length = 0;

      await seedSignups(db, thousandSignups());
      const reply = await sync();
      expect(reply).toMatchObject({ success: true, synced: 700, remaining: 0 });
      expectAllSevenHundredDelivered();
      expect(ml.state.groups.map((group) => group.name).sort()).toEqual([GROUPS.club, GROUPS.updates]);
      expect(groupRequests(ml)).toEqual({ lookups: 2, creations: 2 });
      expect(logger.events().filter((event) => event === 'mailerlite.group_re_resolved')).toHaveLength(2);
      // The one batch sent with the stale ids was refused whole and sent again; nothing else twice.
      expect(repeatedUpserts(confirmed)).toBe(0);
      expect(confirmedPairs()).toBe(900);
      expect(contactsSent() - confirmed.length).toBe(50);
      expect(await sync()).toMatchObject({ success: true, synced: 0 });
    });

    it('a group deleted mid-run: nothing lost, nothing sent twice beyond the batch in flight', async () => {
      await seedSignups(db, thousandSignups({ repeats: false }));
      let batches = 0;
      let deleted = '';
      const reply = await sync({
        onProgress: async (event) => {
          if (event.type === 'batch' && ++batches === 2) {
            deleted = groupId(GROUPS.updates);
            await deleteGroupInMailerLite(ml, deleted);
          }
        },
      });
      expect(reply).toMatchObject({ success: true, synced: 700, remaining: 0 });
      const recreated = groupId(GROUPS.updates);
      expect(recreated).not.toBe(deleted);
      const typeOf = new Map([
        [deleted, 'updates'],
        [recreated, 'updates'],
        [groupId(GROUPS.club), 'club'],
      ]);
      // Every (address, form) confirmed exactly once, whichever updates group took it.
      const pairs = confirmedTypePairs(typeOf);
      expect(pairs).toHaveLength(900);
      expect(new Set(pairs).size).toBe(900);
      // Sent but not confirmed: only the refused entries of the one batch that met the deletion.
      const refused = contactsSent() - confirmed.length;
      expect(refused).toBeGreaterThan(0);
      expect(refused).toBeLessThanOrEqual(50);
      // Everyone confirmed into the new group is in it (MailerLite took the members of the deleted
      // group out with it); the club group was never touched.
      const byEmail = new Map(ml.state.subscribers.map((s) => [s.email, s]));
      for (const { email, groups } of confirmed) {
        for (const id of groups.filter((group) => group !== deleted)) {
          expect(byEmail.get(email)?.groups, email).toContain(id);
        }
      }
      expect(ml.state.subscribers).toHaveLength(700);
      expect(logger.entries.filter((entry) => entry.event === 'mailerlite.group_re_resolved')).toEqual([
        {
          severity: 'warn',
          event: 'mailerlite.group_re_resolved',
          fields: { subscription_type: 'updates', refused_group_id: deleted, group_id: recreated },
        },
      ]);
      expect(await sync()).toMatchObject({ success: true, synced: 0, remaining: 0 });
    });

    it('a crash after the refusal, before the re-resolution: the next run delivers everything', async () => {
      await seedSignups(db, thousandSignups({ repeats: false }));
      let batches = 0;
      let deleted = '';
      const crash = sync({
        onProgress: async (event) => {
          if (event.type !== 'batch') return;
          batches += 1;
          if (batches === 1) {
            deleted = groupId(GROUPS.updates);
            await deleteGroupInMailerLite(ml, deleted);
          }
          if (batches === 2 && event.retry > 0) throw new Error('the instance died');
        },
      });
      await expect(crash).rejects.toThrow('the instance died');

      const reply = await sync();
      expect(reply).toMatchObject({ success: true, remaining: 0 });
      const typeOf = new Map([
        [deleted, 'updates'],
        [groupId(GROUPS.updates), 'updates'],
        [groupId(GROUPS.club), 'club'],
      ]);
      const pairs = confirmedTypePairs(typeOf);
      expect(new Set(pairs).size).toBe(900);
      // Repeated: at most what the interrupted batch had confirmed before the crash (the cursor had
      // not passed it). Refused: its other entries, and the next run's first batch, still sent with
      // the stale id the instance had cached.
      expect(pairs.length - 900).toBeLessThanOrEqual(50);
      expect(contactsSent() - confirmed.length).toBeLessThanOrEqual(100);
      expect(ml.state.subscribers).toHaveLength(700);
    });

    it('a configured id that does not exist: stops, the logs saying which param to fix and the public reply naming none; nothing passed, nothing created', async () => {
      await seedSignups(db, thousandSignups());
      const club = ml.addGroup(GROUPS.club);
      const reply = await sync({ groups: { updates: '404', club } });
      expect(reply.success).toBe(false);
      expect(reply.error).toMatch(
        /^MailerLite refused the group or field configuration the server uses\. The functions' logs \(sync\.failed\) say what to fix\. \d+ emails? synced before it stopped\./,
      );
      expect(JSON.stringify(reply)).not.toMatch(/MAILERLITE_GROUP|404|group id/);
      expect(logger.entries.find((entry) => entry.event === 'sync.failed')?.fields.detail).toMatch(
        /^MAILERLITE_GROUP_UPDATES is set to the group id 404, and MailerLite has no group with that id\./,
      );
      expect(groupRequests(ml)).toEqual({ lookups: 0, creations: 0 });
      expect(ml.state.groups.map((group) => group.id)).toEqual([club]);
      expect(reply.remaining).toBeGreaterThan(0);
      // The operator fixes the param: the next run delivers everyone, from where the cursor stopped.
      const updates = ml.addGroup(GROUPS.updates);
      expect(await sync({ groups: { updates, club } })).toMatchObject({ success: true, remaining: 0 });
      expectAllSevenHundredDelivered();
      // Only the batch the first run stopped in: its club entries were confirmed, but the cursor
      // could not pass the refused ones among them.
      expect(repeatedUpserts(confirmed)).toBeLessThanOrEqual(50);
    });
  });

  describe('the wait between syncs', () => {
    it('refuses a sync within the interval after one that finished, saying when to try again; then runs', async () => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      const interval = { options: { minIntervalMs: 60_000 } };
      expect(await sync(interval)).toMatchObject({ success: true, synced: 1 });
      const requests = ml.state.requests.length;
      const refused = await sync(interval);
      expect(refused).toMatchObject({ success: false, synced: 0 });
      expect(refused.error).toMatch(/^A sync finished moments ago\. Try again in (60|59|58) seconds\.$/);
      expect(ml.state.requests.length).toBe(requests);
      expect(logger.events()).toContain('sync.refused_too_soon');
      // A minute later it runs.
      expect(await sync({ ...interval, clock: clockAhead(61_000) })).toMatchObject({ success: true });
    });

    it('lets a run that stopped at its deadline with work left be continued at once', async () => {
      await seedSignups(db, thousandSignups());
      const first = await sync({
        deadline: Date.now() + 16_000,
        stopMarginMs: 15_000,
        options: { minIntervalMs: 60_000 },
      });
      expect(first.remaining).toBeGreaterThan(0);
      expect(await sync({ options: { minIntervalMs: 60_000 } })).toMatchObject({
        success: true,
        remaining: 0,
      });
    });
  });

  describe('junk in the way', () => {
    it('gets past thousands of repeats of a few addresses to the real sign-ups behind them, in the same run', async () => {
      const junk = Array.from({ length: 3_000 }, (_, i) => ({ email: `bot${i % 10}@example.com`, ...HERO }));
      const real = ['kid@example.com', 'friend@example.com', 'parent@example.com'].map((email) => ({
        email,
        ...FINAL,
      }));
      await seedSignups(db, [...junk, ...real], Date.now() - 60_000);
      const checkpoints: number[] = [];
      // The length of every page the run asks Firestore for.
      const queries = Object.getPrototypeOf(Object.getPrototypeOf(db.collection('c'))) as Query;
      const limit = vi.spyOn(queries, 'limit');
      let pageLimits: number[] = [];
      let reply: SyncReply;
      try {
        reply = await sync({
          options: { pageSize: 100 },
          onProgress: (event) => {
            if (event.type === 'checkpoint') checkpoints.push(event.synced);
          },
        });
      } finally {
        pageLimits = limit.mock.calls.map(([n]) => n);
        limit.mockRestore();
      }
      expect(reply).toMatchObject({ success: true, synced: 13, remaining: 0 });
      // At most PAGES_PER_STEP pages a step (longer while they hold only repeats), each step a checkpoint
      // (the cursor written, the lease renewed): never one unbounded read before the first.
      expect(checkpoints.length).toBeGreaterThanOrEqual(2);
      expect(pageLimits.length).toBeLessThanOrEqual(PAGES_PER_STEP * checkpoints.length);
      expect(pageLimits.slice(0, 4)).toEqual([100, 100, 400, 1_600]);
      expect(Math.max(...pageLimits)).toBeLessThanOrEqual(MAX_SKIP_PAGE);
      expect(logger.entries.find((entry) => entry.event === 'sync.finished')?.fields).toMatchObject({
        read: 3_003,
        duplicates: 2_990,
      });
      // One upsert per address: the repeats cost no request.
      expect(new Set(confirmed.map((upsert) => upsert.email)).size).toBe(13);
      expect(confirmed).toHaveLength(13);
    });

    it('a run stopped after its first step has moved its cursor past the junk it read', async () => {
      const junk = Array.from({ length: 2_000 }, (_, i) => ({ email: `bot${i % 5}@example.com`, ...HERO }));
      await seedSignups(db, [...junk, { email: 'kid@example.com', ...HERO }], Date.now() - 60_000);
      let steps = 0;
      const first = await sync({
        options: { pageSize: 100 },
        onProgress: (event) => {
          if (event.type === 'checkpoint' && ++steps === 1) throw new Error('stopped here');
        },
      }).catch((error: Error) => error);
      expect(first).toBeInstanceOf(Error);
      const next = await sync({ options: { pageSize: 100 } });
      expect(next).toMatchObject({ success: true, remaining: 0 });
      expect(
        logger.entries.filter((entry) => entry.event === 'sync.finished').at(-1)?.fields.read,
      ).toBeLessThan(100);
    });
  });

  describe('stops before the deadline', () => {
    it('says how many remain, and the next run continues where it stopped', async () => {
      await seedSignups(db, thousandSignups());
      ml.setLimits({ ...TEST_LIMITS, windowMs: 2_000 });
      const first = await sync({ deadline: Date.now() + 1_000, stopMarginMs: 0 });
      expect(first.success).toBe(true);
      expect(first.synced).toBeGreaterThan(0);
      expect(first.remaining).toBeGreaterThan(0);
      expect(first.remaining).toBeLessThan(1_000);
      expect(first.message).toBe(
        `Synced ${first.synced} emails to MailerLite. ${first.remaining} sign-ups remain: run the sync again to continue.`,
      );
      freshLogger();
      const second = await sync();
      expect(second).toMatchObject({ success: true, remaining: 0 });
      // The second run read exactly the sign-ups the first said remained.
      expect(finished()?.read).toBe(first.remaining);
      expectAllSevenHundredDelivered();
    });
  });

  describe('when MailerLite fails', () => {
    it('batch entries failing with 500: retried, all delivered', async () => {
      await seedSignups(db, thousandSignups());
      ml.faults.failNext(3, 500, undefined, { batched: true, pathPrefix: '/api/subscribers' });
      expect(await sync()).toMatchObject({ success: true, synced: 700 });
      expectAllSevenHundredDelivered();
    });

    it('a batch entry refused as an invalid address: counted, passed, not retried', async () => {
      await seedSignups(db, thousandSignups());
      const invalid = {
        message: 'The email must be a valid email address.',
        errors: { email: ['The email must be a valid email address.'] },
      };
      ml.faults.failNext(1, 422, invalid, { batched: true, pathPrefix: '/api/subscribers' });
      const reply = await sync();
      expect(reply).toMatchObject({ success: true, synced: 699, rejected: 1, remaining: 0 });
      expect(reply.message).toBe(
        'Synced 699 emails to MailerLite. MailerLite refused 1 stored address as invalid.',
      );
      expect(ml.state.subscribers).toHaveLength(699);
      expect(logger.entries.filter((entry) => entry.event === 'sync.contact_rejected')).toHaveLength(1);
      expect(await sync()).toMatchObject({ synced: 0 });
    });

    it('a batch entry refused over its groups: stops without passing anyone', async () => {
      await seedSignups(db, thousandSignups());
      const badGroup = {
        message: 'The given data was invalid.',
        errors: { 'groups.0': ['The selected groups.0 is invalid.'] },
      };
      ml.faults.failNext(1, 422, badGroup, { batched: true, pathPrefix: '/api/subscribers' });
      const reply = await sync();
      expect(reply.success).toBe(false);
      expect(reply.error).toMatch(/^MailerLite refused the group or field configuration the server uses\./);
      expect(await sync()).toMatchObject({ success: true, remaining: 0 });
      expectAllSevenHundredDelivered();
    });

    it('401: success false, saying the key was refused; nothing delivered, nothing passed', async () => {
      await seedSignups(db, thousandSignups());
      const groups = { updates: ml.addGroup(GROUPS.updates), club: ml.addGroup(GROUPS.club) };
      const reply = await sync({ groups }, { apiKey: 'revoked' });
      expect(reply).toMatchObject({ success: false, synced: 0, remaining: 1_000 });
      expect(reply.error).toMatch(
        /^MailerLite refused the API key the server uses\. 0 emails synced before it stopped\./,
      );
      expect((await syncState())?.cursor).toBeNull();
      expect(ml.state.subscribers).toEqual([]);
    });

    it('401 on resolving the groups: success false before anything is sent', async () => {
      await seedSignups(db, thousandSignups());
      const reply = await sync({}, { apiKey: 'revoked' });
      expect(reply).toMatchObject({ success: false, synced: 0 });
      expect(reply.error).toBe('MailerLite refused the API key the server uses.');
    });

    it('500 that persists: success false, nothing passed; the next run delivers everything', async () => {
      await seedSignups(db, thousandSignups());
      ml.faults.failNext(20, 500, undefined, { pathPrefix: '/api/batch' });
      const reply = await sync({}, { maxAttempts: 3 });
      expect(reply).toMatchObject({ success: false, synced: 0 });
      expect(reply.error).toMatch(
        /^MailerLite is unavailable right now\. 0 emails synced before it stopped\./,
      );
      ml.faults.clear();
      expect(await sync()).toMatchObject({ success: true, synced: 700 });
      expectAllSevenHundredDelivered();
    });

    it('too slow to answer: times out, success false; the next run delivers everything', async () => {
      await seedSignups(db, thousandSignups());
      ml.faults.latencyMs = 1_000;
      const reply = await sync(
        { groups: { updates: ml.addGroup(GROUPS.updates), club: ml.addGroup(GROUPS.club) } },
        {
          timeoutMs: 100,
          maxAttempts: 2,
        },
      );
      expect(reply).toMatchObject({ success: false });
      expect(reply.error).toMatch(/^MailerLite is unavailable right now\./);
      ml.faults.latencyMs = 0;
      await new Promise((resolve) => setTimeout(resolve, 1_200)); // let the abandoned requests land
      expect(await sync()).toMatchObject({ success: true, remaining: 0 });
      expectAllSevenHundredDelivered();
    });

    it('going down mid-run: keeps what was confirmed, and the next run delivers the rest', async () => {
      await seedSignups(db, thousandSignups({ repeats: false }));
      let batches = 0;
      const reply = await sync(
        {
          onProgress: (event) => {
            if (event.type === 'batch' && ++batches === 2) ml.faults.down = true;
          },
        },
        { maxAttempts: 2 },
      );
      // Two batches of 50 upserts confirmed; an address can be in both (each with another group).
      expect(confirmed).toHaveLength(100);
      expect(reply).toMatchObject({ success: false, synced: new Set(confirmed.map((c) => c.email)).size });
      expect(reply.error).toMatch(
        new RegExp(
          `^MailerLite is unavailable right now\\. ${reply.synced} emails synced before it stopped\\.`,
        ),
      );
      expect(reply.remaining).toBeGreaterThan(0);
      ml.faults.down = false;
      expect(await sync()).toMatchObject({ success: true, remaining: 0 });
      expectAllSevenHundredDelivered();
      // The batch that met the outage was never confirmed: nothing is repeated.
      expect(repeatedUpserts(confirmed)).toBe(0);
    });
  });

  describe('when Firestore fails', () => {
    // Real refusals: the sync runs with a client the project's rules bind (not the Admin SDK's owner
    // credential), and the rules below let it do everything but write the sync's state.
    const ALLOW_ALL = `rules_version = '2';
service cloud.firestore { match /databases/{database}/documents { match /{document=**} { allow read, write: if true; } } }`;
    const REFUSE_SYNC_STATE = `rules_version = '2';
service cloud.firestore { match /databases/{database}/documents {
  match /{collection}/{document=**} {
    allow read: if true;
    allow write: if collection != '${SYNC_STATE_COLLECTION}';
  }
} }`;
    afterEach(() => firestore.setRules(ALLOW_ALL));

    it('refusing the lease write: unavailable, nothing sent', async () => {
      await seedSignups(db, thousandSignups());
      await firestore.setRules(REFUSE_SYNC_STATE);
      await expectHttpsError(sync({ db: firestore.refusingClient() }), 'unavailable');
      expect(ml.state.requests).toEqual([]);
    });

    it('refusing a cursor write mid-run: success false; the next run completes', async () => {
      await seedSignups(db, thousandSignups());
      await firestore.setRules(ALLOW_ALL);
      const refusing = firestore.refusingClient();
      let batches = 0;
      let refused: Promise<void> | undefined;
      const reply = await sync({
        db: refusing,
        onProgress: (event) => {
          if (event.type === 'batch' && ++batches === 1) refused = firestore.setRules(REFUSE_SYNC_STATE);
        },
      });
      await refused;
      expect(reply).toMatchObject({ success: false });
      expect(reply.error).toMatch(/^The database is unavailable right now\./);
      // The refused run could not give its lease back either: the next run comes after the lease expired.
      await firestore.setRules(ALLOW_ALL);
      const afterTheLease = { ...systemClock, now: () => systemClock.now() + 4 * 60_000 };
      expect(await sync({ db: refusing, clock: afterTheLease })).toMatchObject({
        success: true,
        remaining: 0,
      });
      expectAllSevenHundredDelivered();
    });
  });

  it('skips stored documents that are not sign-ups, and says so', async () => {
    await seedSignups(db, [
      { email: 'kid@example.com', ...HERO },
      { email: 'not an address', ...HERO },
      { email: 'teen@example.com', subscription_type: 'vip', source: 'hero_form' },
    ]);
    const reply = await sync();
    expect(reply).toMatchObject({ success: true, synced: 1, skipped: 2, remaining: 0 });
    expect(reply.message).toBe(
      'Synced 1 email to MailerLite. 2 stored documents were not a sign-up and were skipped.',
    );
    expect(logger.text()).not.toContain('not an address');
  });

  describe('refuses any argument, writing and sending nothing', () => {
    it.each<[string, unknown]>([
      ['a string', 'all'],
      ['a number', 1],
      ['an array', []],
      ['an object with a field', { limit: 10 }],
      ['an address', { email: 'kid@example.com' }],
      ['a 10 kB string', 'x'.repeat(10_240)],
      ['control characters', '\u0000\u001b[2J'],
    ])('%s', async (_, body) => {
      await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
      await expectHttpsError(handleSyncEmailsToMailerlite(body, deps()), 'invalid-argument');
      expect(logger.events()).toEqual(['input.rejected']);
      expect(await syncState()).toBeUndefined();
      expect(ml.state.requests).toEqual([]);
    });
  });
});
