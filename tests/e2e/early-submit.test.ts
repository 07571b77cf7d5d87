// A sign-up made before the app has arrived: the landing page paints from HTML and loads its app only when
// the visitor engages, so on a slow link the address can be typed and sent first. The page's inline script
// must keep it (no reload, no lost or doubled sign-up) and the app must run it once it has come; if the app
// never comes, the visitor is told and keeps what they typed.

import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  blockAppScripts,
  type FormName,
  holdAppScripts,
  openLanding,
  signupForm,
  TEXT,
  UI_TIMEOUT_MS,
  uniqueEmail,
  waitForToast,
} from './support/app.ts';
import { useE2E } from './support/fixture.ts';

const e2e = useE2E();

/** A mark on the document: gone if the page reloads or navigates. */
async function markDocument(page: Page): Promise<() => Promise<boolean>> {
  await page.evaluate(() => {
    (window as { samePage?: boolean }).samePage = true;
  });
  return () => page.evaluate(() => (window as { samePage?: boolean }).samePage === true);
}

/** Waits until the form's submit button is disabled and the form says it is busy. */
async function expectBusy(page: Page, form: FormName): Promise<void> {
  const { form: element, submit } = signupForm(page, form);
  await expect.poll(() => element.getAttribute('aria-busy')).toBe('true');
  expect(await submit.isDisabled()).toBe(true);
}

const successTitle = { hero: TEXT.heroSuccessTitle, final: TEXT.clubSuccessTitle } as const;

describe.each([
  { form: 'hero' as const, how: 'Enter in the field' },
  { form: 'final' as const, how: 'a press of the button' },
])('$how on the $form form before the app arrives', ({ form, how }) => {
  it('is kept: no reload, the form busy, then the success toast and exactly one stored sign-up', async () => {
    const { page } = await e2e.page();
    const scripts = await holdAppScripts(page);
    await openLanding(page, e2e.stack.siteUrl, { engage: false });
    const samePage = await markDocument(page);
    const email = uniqueEmail(`early-${form}`);
    const { email: field, submit } = signupForm(page, form);

    await field.fill(email);
    if (how === 'Enter in the field') await field.press('Enter');
    else await submit.click();

    await expectBusy(page, form);
    expect(scripts.requested(), 'the app was asked for at once').toBeGreaterThan(0);
    expect(await field.inputValue()).toBe(email);
    expect(await e2e.services.firestore.documents('email_subscriptions')).toEqual([]);

    await scripts.release();
    const toast = await waitForToast(page, successTitle[form]);
    expect(toast).toEqual({
      variant: 'success',
      title: successTitle[form],
      description: TEXT.successDescription,
    });
    await expect.poll(() => field.inputValue(), { message: 'the field is cleared' }).toBe('');
    expect(await samePage(), 'the page did not reload').toBe(true);
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe('/');
    const stored = await e2e.services.firestore.documents('email_subscriptions');
    expect(stored.map((doc) => doc.data)).toMatchObject([{ email }]);
    expect(stored).toHaveLength(1);
    expect(await submit.isEnabled()).toBe(true);
  });
});

it('a double press before the app arrives stores one sign-up', async () => {
  const { page } = await e2e.page();
  const scripts = await holdAppScripts(page);
  await openLanding(page, e2e.stack.siteUrl, { engage: false });
  const email = uniqueEmail('early-double');
  const { email: field, submit } = signupForm(page, 'hero');

  await field.fill(email);
  await submit.click();
  await expectBusy(page, 'hero');
  // Everything a visitor can do again: press the (disabled) button, press Enter in the field.
  await submit.click({ force: true });
  await field.press('Enter');
  await submit.dblclick({ force: true });

  await scripts.release();
  await waitForToast(page, TEXT.heroSuccessTitle);
  // Any second sign-up would have been sent right after the first one; give it time to land.
  await page.waitForTimeout(1_000);
  const stored = await e2e.services.firestore.documents('email_subscriptions');
  expect(stored.map((doc) => doc.data)).toMatchObject([{ email, source: 'hero_form' }]);
  expect(stored).toHaveLength(1);
});

it('with the app blocked for good, the visitor is told plainly and keeps the address', async () => {
  const { page } = await e2e.page();
  await blockAppScripts(page);
  await openLanding(page, e2e.stack.siteUrl, { engage: false });
  const samePage = await markDocument(page);
  const email = uniqueEmail('early-blocked');
  const { form, email: field, submit } = signupForm(page, 'hero');

  await field.fill(email);
  await field.press('Enter');
  await expectBusy(page, 'hero');

  const notice = form.getByText(TEXT.appUnavailable, { exact: true });
  await notice.waitFor({ timeout: UI_TIMEOUT_MS });
  expect(await notice.getAttribute('aria-live')).toBe('polite');
  expect(await field.inputValue()).toBe(email);
  expect(await form.getAttribute('aria-busy')).toBe('false');
  expect(await submit.isEnabled()).toBe(true);
  expect(await samePage()).toBe(true);
  expect(await e2e.services.firestore.documents('email_subscriptions')).toEqual([]);
});

it('an app that arrives after the visitor was told sends nothing by itself, and the next press signs up once', async () => {
  const { page } = await e2e.page();
  const scripts = await holdAppScripts(page);
  await openLanding(page, e2e.stack.siteUrl, { engage: false });
  const email = uniqueEmail('early-late');
  const { form, email: field, submit } = signupForm(page, 'final');

  await field.fill(email);
  await submit.click();
  await form.getByText(TEXT.appUnavailable, { exact: true }).waitFor({ timeout: UI_TIMEOUT_MS });

  await scripts.release();
  await page.waitForFunction(
    () => (window as { __goodySignupCapture?: { live: string[] } }).__goodySignupCapture?.live.length === 2,
    undefined,
    { timeout: UI_TIMEOUT_MS },
  );
  // The app took the form over; the message of the late app is gone and nothing was sent.
  await expect.poll(() => form.getByText(TEXT.appUnavailable).count()).toBe(0);
  await page.waitForTimeout(1_000);
  expect(await e2e.services.firestore.documents('email_subscriptions')).toEqual([]);
  expect(await field.inputValue()).toBe(email);

  await submit.click();
  await waitForToast(page, TEXT.clubSuccessTitle);
  const stored = await e2e.services.firestore.documents('email_subscriptions');
  expect(stored.map((doc) => doc.data)).toMatchObject([{ email, source: 'final_cta' }]);
  expect(stored).toHaveLength(1);
});
