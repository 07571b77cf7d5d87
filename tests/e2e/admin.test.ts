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
    // Another operator's sync holds the lease for the whole case, as a run in flight holds it (how long a real
    // run holds it depends on the rows it waits for, which is the functions' tests' subject, not the page's).
    await e2e.services.firestore.holdSyncLease('another-operator', 5 * 60_000);
    await openAdmin(page, e2e.stack.siteUrl);
    await syncButton(page).click();

    expect(await waitForToast(page, TEXT.syncFailedTitle)).toEqual({
      variant: 'error',
      title: TEXT.syncFailedTitle,
      description: 'A sync is already running. Try again when it has finished.',
    });
    // The page's press took nothing from the other run: its lease is as it held it.
    const [state] = await e2e.services.firestore.documents('_sync');
    expect(state?.data.lease).toMatchObject({ owner: 'another-operator' });
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
