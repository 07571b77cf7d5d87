import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { clockAhead } from '../../test-support/logs';
import { recordingMailerLiteClient, repeatedUpserts } from '../../test-support/mailerlite';
import { FINAL, HERO, seedSignups, taskFor, testMailboxes } from '../../test-support/signups';
import {
  confirmed,
  confirmedPairs,
  contactsSent,
  db,
  expectAllSevenHundredDelivered,
  firestore,
  GROUPS,
  logger,
  ml,
  sync,
  syncState,
  thousandSignups,
  useSyncHarness,
} from '../../test-support/sync-harness';
import { systemClock } from '../clock';
import { SYNC_STATE_COLLECTION, SYNC_STATE_DOC } from '../sync/state';
import { handleDeliverContact } from '../tasks/deliver-contact';

useSyncHarness();

describe('sync-emails-to-mailerlite', () => {
  it('delivers 1,000 sign-ups of 700 people: each address once, in the right groups, synced 700', async () => {
    await seedSignups(db, thousandSignups());
    const reply = await sync();
    expect(reply).toEqual({
      success: true,
      message: 'Synced 700 emails to MailerLite.',
      synced: 700,
      error: null,
      remaining: 0,
      rejected: 0,
      skipped: 0,
    });
    expectAllSevenHundredDelivered();
    // Deduplicated: no (address, group) pair twice, the 100 repeats sent not at all.
    expect(repeatedUpserts(confirmed)).toBe(0);
    expect(confirmedPairs()).toBe(900);
    expect(contactsSent()).toBe(confirmed.length);
    const state = await syncState();
    expect(state?.lease).toBeNull();
    expect(state?.last_run).toMatchObject({ outcome: 'done', synced: 700 });
    expect(logger.text()).not.toMatch(/kid\d+@example\.com/i);
  });

  it('uses the bulk endpoint while the import limit allows, single upserts for the rest, and honours 429s', async () => {
    await seedSignups(db, thousandSignups());
    await sync();
    const requests = ml.state.requests.filter((request) => request.path.startsWith('/api/'));
    const batches = requests.filter((request) => request.path === '/api/batch' && request.status === 200);
    expect(batches.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...batches.map((batch) => batch.batchSize ?? 0))).toBe(50);
    // Waiting out each Retry-After means about one refused request per limit per window; a client
    // that ignored it would have been refused hundreds of times.
    const refused = requests.filter((request) => request.status === 429).length;
    expect(refused).toBeGreaterThan(0);
    expect(refused).toBeLessThanOrEqual(10);
  });

  it('reads ahead past repeats that need no request, so its batches stay full', async () => {
    // One new address in every 20 sign-ups; the other 19 repeat one already delivered.
    const signups = [{ email: 'eager@example.com', ...HERO }];
    for (let i = 0; i < 100; i += 1) {
      signups.push({ email: `kid${i}@example.com`, ...HERO });
      for (let r = 0; r < 19; r += 1) signups.push({ email: 'Eager@Example.com', ...HERO });
    }
    await seedSignups(db, signups);
    expect(await sync()).toMatchObject({ success: true, synced: 101, remaining: 0 });
    expect(confirmed).toHaveLength(101);
    const batches = ml.state.requests.filter(
      (request) => request.path === '/api/batch' && request.status === 200,
    );
    expect(batches.map((batch) => batch.batchSize)).toEqual([50, 50]);
  });

  it('syncs nothing the second time, and only the new sign-ups the third', async () => {
    await seedSignups(db, thousandSignups());
    await sync();
    const requestsBefore = ml.state.requests.length;
    expect(await sync()).toMatchObject({
      success: true,
      synced: 0,
      remaining: 0,
      message: 'Synced 0 emails to MailerLite.',
    });
    expect(ml.state.requests.slice(requestsBefore).filter((r) => r.method === 'POST')).toEqual([]);

    await seedSignups(db, [
      { email: 'newcomer@example.com', ...HERO },
      { email: 'kid1@example.com', ...FINAL },
    ]);
    expect(await sync()).toMatchObject({
      success: true,
      synced: 2,
      message: 'Synced 2 emails to MailerLite.',
    });
    expect(ml.state.subscribers).toHaveLength(701);
  });

  describe("beside the rows' own tasks (tasks/deliver-contact.ts) and one contact per mailbox", () => {
    it('settles what the tasks delivered without a request, and counts it as synced', async () => {
      await seedSignups(db, [
        { email: 'kid@example.com', ...HERO },
        { email: 'friend@example.com', ...HERO },
      ]);
      const contactDeps = {
        db,
        client: recordingMailerLiteClient(ml, confirmed),
        groups: GROUPS,
        clock: systemClock,
        logger,
        mailboxes: testMailboxes(db),
      };
      expect(await handleDeliverContact(await taskFor(db, 'kid@example.com'), contactDeps)).toBe('delivered');
      const before = confirmed.length;
      const reply = await sync();
      expect(reply).toMatchObject({ success: true, synced: 2 });
      // Only friend was sent; kid's row was delivered by its task.
      expect(confirmed.slice(before).map((upsert) => upsert.email)).toEqual(['friend@example.com']);
      // And a task that comes after the sync finds friend delivered too.
      expect(await handleDeliverContact(await taskFor(db, 'friend@example.com'), contactDeps)).toBe(
        'already_delivered',
      );
    });

    it('sends spellings of one mailbox as one contact, in every group they asked for', async () => {
      await seedSignups(db, [
        { email: 'kid.teen@gmail.com', ...HERO },
        { email: 'kidteen+1@gmail.com', ...HERO },
        { email: 'Kid.Teen+goody@googlemail.com', ...FINAL },
        { email: 'kidteen@gmail.com', ...HERO },
        { email: 'kid+x@school-example.org', ...HERO },
        { email: 'kid@school-example.org', ...FINAL },
      ]);
      const reply = await sync();
      expect(reply).toMatchObject({ success: true });
      const subscribers = ml.state.subscribers.map((s) => [s.email, s.groups.length]).sort();
      // A mailbox pushed for the first time gets its bare spelling (its own) over a +tag one stored before it.
      expect(subscribers).toEqual([
        ['kid.teen@gmail.com', 2],
        ['kid@school-example.org', 2],
      ]);
    });
  });

  it('runs one sync at a time: of two started together, one runs and one is refused', async () => {
    await seedSignups(db, thousandSignups());
    const replies = await Promise.all([sync(), sync()]);
    const refused = replies.filter((reply) => !reply.success);
    expect(refused).toEqual([
      {
        success: false,
        message: 'A sync is already running. Try again when it has finished.',
        synced: 0,
        error: 'A sync is already running. Try again when it has finished.',
        remaining: null,
        rejected: 0,
        skipped: 0,
      },
    ]);
    expect(replies.find((reply) => reply.success)?.synced).toBe(700);
    expectAllSevenHundredDelivered();
    expect(repeatedUpserts(confirmed)).toBe(0);
  });

  it('takes over the lease of a run that died without giving it back', async () => {
    await seedSignups(db, thousandSignups());
    await db
      .collection(SYNC_STATE_COLLECTION)
      .doc(SYNC_STATE_DOC)
      .set({
        cursor: null,
        lease: { owner: 'a-dead-run', expires_at: new Date(Date.now() - 1) },
        updated_at: new Date(),
      });
    expect(await sync()).toMatchObject({ success: true, synced: 700 });
    expect(logger.events()).toContain('sync.lease_taken_over');
  });

  it('refuses while a live lease is held by another run', async () => {
    await db
      .collection(SYNC_STATE_COLLECTION)
      .doc(SYNC_STATE_DOC)
      .set({
        cursor: null,
        lease: { owner: 'a-live-run', expires_at: new Date(Date.now() + 60_000) },
        updated_at: new Date(),
      });
    expect(await sync()).toMatchObject({ success: false, synced: 0 });
    expect(ml.state.requests).toEqual([]);
  });

  it('stops when another run took its lease over, without touching that run', async () => {
    await seedSignups(db, thousandSignups());
    let batches = 0;
    const reply = await sync({
      onProgress: async (event) => {
        if (event.type === 'batch' && ++batches === 2) {
          await db
            .collection(SYNC_STATE_COLLECTION)
            .doc(SYNC_STATE_DOC)
            .update({ lease: { owner: 'the-new-run', expires_at: new Date(Date.now() + 60_000) } });
        }
      },
    });
    expect(reply.success).toBe(false);
    expect(reply.error).toMatch(/^Another sync took over while this one was running\./);
    expect((await syncState())?.lease).toMatchObject({ owner: 'the-new-run' });
  });

  describe('crashes lose nothing and repeat at most the step in flight', () => {
    // Each (address, form) signed up once here, so any upsert MailerLite confirmed twice is work the
    // crash made the next run repeat.
    it.each([
      ['after a batch was confirmed, before the cursor was written', 'batch', 3, 50],
      ['right after the cursor was written', 'checkpoint', 4, 0],
      ['after a wave of single upserts, before the cursor was written', 'single', 20, 8],
    ] as const)('%s', async (_, type, after, repeatsAtMost) => {
      await seedSignups(db, thousandSignups({ repeats: false }));
      let seen = 0;
      const crash = sync({
        onProgress: (event) => {
          if (event.type === type && ++seen === after) throw new Error('the instance died');
        },
      });
      await expect(crash).rejects.toThrow('the instance died');
      const delivered = ml.state.subscribers.length;
      expect(delivered).toBeGreaterThan(0);
      expect(delivered).toBeLessThan(700);

      const reply = await sync();
      expect(reply).toMatchObject({ success: true, remaining: 0 });
      expectAllSevenHundredDelivered();
      expect(confirmedPairs()).toBe(900);
      expect(repeatedUpserts(confirmed)).toBeLessThanOrEqual(repeatsAtMost);
      if (repeatsAtMost > 0) expect(repeatedUpserts(confirmed)).toBeGreaterThan(0);
    });

    it('killed with SIGKILL mid-run (no cleanup at all), then run again after its lease expired', async () => {
      await seedSignups(db, thousandSignups({ repeats: false }));
      const updates = ml.addGroup(GROUPS.updates);
      const club = ml.addGroup(GROUPS.club);
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(new URL('../../test-support/sync-child.ts', import.meta.url))],
        {
          env: {
            ...process.env,
            FIRESTORE_EMULATOR_HOST: firestore.hostPort,
            GCLOUD_PROJECT: firestore.projectId,
            MAILERLITE_BASE_URL: ml.baseUrl,
            MAILERLITE_API_KEY: ml.apiKey,
            GROUP_UPDATES: updates,
            GROUP_CLUB: club,
            LEASE_MS: '60000',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
        child.on('exit', (code, signal) => resolve(signal ?? code)),
      );
      await expect
        .poll(() => ml.state.subscribers.length, { timeout: 30_000, interval: 10 })
        .toBeGreaterThanOrEqual(150);
      child.kill('SIGKILL');
      expect(await exited, stderr).toBe('SIGKILL');
      const delivered = ml.state.subscribers.length;
      expect(delivered).toBeLessThan(700);
      expect((await syncState())?.lease).not.toBeNull();

      // Its lease still holds: a sync now is refused rather than racing a run that might be alive.
      expect(await sync()).toMatchObject({ success: false });
      // Once the lease has run out, the next run takes over from the cursor and completes.
      const reply = await sync({ clock: clockAhead(61_000), groups: { updates, club } });
      expect(reply).toMatchObject({ success: true, remaining: 0 });
      expect(logger.events()).toContain('sync.lease_taken_over');
      expectAllSevenHundredDelivered();
      // One upsert per (address, form) at most, plus the step the kill interrupted.
      expect(contactsSent()).toBeLessThanOrEqual(900 + 50);
    });
  });
});
