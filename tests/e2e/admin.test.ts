// The Admin Dashboard's sync, against the real sync callable and the MailerLite stand-in: the running state,
// the success toast with the count, a refusal by MailerLite, and a second sync while one runs.

import { describe, expect, it } from 'vitest';
import { openAdmin, openLanding, syncButton, TEXT, uniqueEmail, waitForToast } from './support/app.ts';
import { useE2E } from './support/fixture.ts';
import { MAILERLITE_GROUP_NAMES } from './support/services.ts';

const e2e = useE2E();

/** Stores sign-ups directly (the subject here is the sync, not the form); returns their addresses by type. */
async function storeSignups(updates: number, club: number): Promise<{ updates: string[]; club: string[] }> {
  const stored = { updates: [] as string[], club: [] as string[] };
  for (let i = 0; i < updates + club; i++) {
    const type = i < updates ? 'updates' : 'club';
    const email = uniqueEmail(`sync-${type}`);
    await e2e.services.firestore.storeSignup(
      `signup-${i}`,
      email,
      type,
      type === 'updates' ? 'hero_form' : 'final_cta',
    );
    stored[type].push(email);
  }
  return stored;
}

/** Resolves once a sync holds the lease in `_sync/mailerlite`. */
async function syncLeaseTaken(): Promise<void> {
  await expect
    .poll(
      async () => {
        const [state] = await e2e.services.firestore.documents('_sync');
        return state?.data.lease ?? null;
      },
      { timeout: 60_000, interval: 100 },
    )
    .not.toBeNull();
}

describe('Admin Dashboard sync', () => {
  it('reads "Syncing..." and is disabled while the sync runs, then says "Sync Successful!" with the count', async () => {
    const { page } = await e2e.page();
    // Every MailerLite answer takes a second: the rows' own tasks are still on their way when the sync runs,
    // and it waits for them, so the running state lasts long enough to be seen.
    await e2e.services.mailerLite.setFaults({ latencyMs: 1_000 });
    const stored = await storeSignups(2, 1);
    await openAdmin(page, e2e.stack.siteUrl);
    const syncCalls: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/sync-emails-to-mailerlite')) syncCalls.push(request.url());
    });

    await syncButton(page).click();

    const running = page.getByRole('button', { name: TEXT.syncing, exact: true });
    await running.waitFor();
    expect(await running.isDisabled()).toBe(true);
    // A click on the disabled button starts nothing.
    await running.click({ force: true });

    expect(await waitForToast(page, TEXT.syncSuccessTitle)).toEqual({
      variant: 'success',
      title: TEXT.syncSuccessTitle,
      description: '3 sign-ups are in MailerLite or unsubscribed.',
    });
    const idle = page.getByRole('button', { name: TEXT.syncButton, exact: true });
    await idle.waitFor();
    expect(await idle.isEnabled()).toBe(true);
    expect(syncCalls).toHaveLength(1);
    for (const email of stored.updates) {
      expect(await e2e.services.mailerLite.groupsOf(email)).toEqual([MAILERLITE_GROUP_NAMES.updates]);
    }
    for (const email of stored.club) {
      expect(await e2e.services.mailerLite.groupsOf(email)).toEqual([MAILERLITE_GROUP_NAMES.club]);
    }

    // Everything was delivered: a second run hands nothing over and says the same.
    await e2e.services.mailerLite.clearFaults();
    await syncButton(page).click();
    expect((await waitForToast(page, '3 sign-ups are in MailerLite or unsubscribed.')).title).toBe(
      TEXT.syncSuccessTitle,
    );
  });

  it('says "Sync Failed" when MailerLite refuses the API key, and a later sync delivers everything', async () => {
    const { page } = await e2e.page();
    // The key is refused before the row is stored, so its own task (which delivers a stored row without
    // the sync) is refused too and waits for the setup: the sync hands it a new round, refused again.
    await e2e.services.mailerLite.setFaults({
      failNext: { count: 10, status: 401, body: { message: 'Unauthenticated.' } },
    });
    const stored = await storeSignups(1, 0);
    await openAdmin(page, e2e.stack.siteUrl);

    await syncButton(page).click();

    const failure = await waitForToast(page, TEXT.syncFailedTitle);
    expect(failure.variant).toBe('error');
    expect(failure.description).toMatch(/API key/);
    expect(await e2e.services.mailerLite.groupsOf(stored.updates[0] as string)).toBeUndefined();
    expect(await syncButton(page).isEnabled()).toBe(true);

    await e2e.services.mailerLite.clearFaults();
    await syncButton(page).click();
    expect((await waitForToast(page, TEXT.syncSuccessTitle)).description).toBe(
      '1 sign-up is in MailerLite or unsubscribed.',
    );
    expect(await e2e.services.mailerLite.groupsOf(stored.updates[0] as string)).toEqual([
      MAILERLITE_GROUP_NAMES.updates,
    ]);
  });

  it('says "Sync Failed" with the server\'s reason when another sync is already running', async () => {
    const { page } = await e2e.page();
    // The emulator runs each call in an idle worker, or starts one (seconds, on a busy machine). Two syncs at
    // once (nothing to send yet) leave two idle workers, so the page's call below is answered at once rather
    // than after a cold start that could outlast the other sync.
    await Promise.all([e2e.services.sync(), e2e.services.sync()]);
    // A stored row's own task would deliver it before the sync, leaving the sync nothing to wait for (and its
    // lease held for a moment only): with the key refused once each, both rows' tasks wait out Cloud Tasks'
    // backoff, so the other sync below hands both a new round and waits for them.
    await e2e.services.mailerLite.setFaults({
      failNext: { count: 2, status: 401, body: { message: 'Unauthenticated.' } },
    });
    const refusedBefore = (await e2e.services.mailerLite.state()).requests.filter(
      (r) => r.status === 401,
    ).length;
    await storeSignups(2, 0);
    await expect
      .poll(
        async () =>
          (await e2e.services.mailerLite.state()).requests.filter((r) => r.status === 401).length -
          refusedBefore,
        { timeout: 30_000, interval: 100 },
      )
      .toBe(2);
    await openAdmin(page, e2e.stack.siteUrl);
    // Each MailerLite answer takes 5 s: the other sync waits that long for the rounds it handed over, the
    // window in which the page asks.
    await e2e.services.mailerLite.setFaults({ latencyMs: 5_000 });

    // Another operator's sync, over the callable protocol, holds the lease while this page asks.
    const other = e2e.services.sync();
    try {
      await syncLeaseTaken();
      await syncButton(page).click();

      expect(await waitForToast(page, TEXT.syncFailedTitle)).toEqual({
        variant: 'error',
        title: TEXT.syncFailedTitle,
        description: 'A sync is already running. Try again when it has finished.',
      });
    } finally {
      // The other sync finishes normally, whatever happened here, and tells the truth of the moment it stopped
      // waiting: each of the two rows is in MailerLite, or still on its way (a round of its task can still
      // be in MailerLite's 5 s answer then).
      const reply = await other;
      expect(reply).toMatchObject({ success: true, remaining: 0 });
      expect(reply.message).toBe(
        reply.synced === 2
          ? '2 sign-ups are in MailerLite or unsubscribed.'
          : `${reply.synced} sign-up${reply.synced === 1 ? ' is' : 's are'} in MailerLite or unsubscribed; ${2 - reply.synced} more ${2 - reply.synced === 1 ? 'is on its' : 'are on their'} way.`,
      );
    }
  });

  it('has a Back to Home link and the Coming Soon card', async () => {
    const { page } = await e2e.page();
    await openAdmin(page, e2e.stack.siteUrl);
    expect(await page.getByRole('heading', { name: 'Coming Soon' }).isVisible()).toBe(true);

    await page.getByRole('link', { name: TEXT.backToHome }).click();

    await page.waitForURL(`${e2e.stack.siteUrl}/`);
    await openLanding(page, e2e.stack.siteUrl);
  });
});
