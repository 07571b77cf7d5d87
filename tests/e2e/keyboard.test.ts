// A sign-up with the keyboard alone: Tab to the field, type, Tab to the button, Enter.

import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { FORMS, holdAppScripts, openLanding, TEXT, uniqueEmail, waitForToast } from './support/app.ts';
import { useE2E } from './support/fixture.ts';

const e2e = useE2E();

interface Focused {
  role: string;
  name: string;
  focusVisible: boolean;
}

/** The focused element, described by what a screen reader would announce first. */
function focused(page: Page): Promise<Focused> {
  return page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    if (!element || element === document.body) return { role: 'none', name: '', focusVisible: false };
    const input = element as HTMLInputElement;
    const name =
      element.getAttribute('aria-label') ??
      (input.labels?.[0]?.textContent ?? element.textContent ?? '').trim();
    const role = element.tagName === 'INPUT' ? `input[${input.type}]` : element.tagName.toLowerCase();
    return { role, name, focusVisible: element.matches(':focus-visible') };
  });
}

it('completes a hero sign-up with Tab, typing and Enter only, every stop visibly focused', async () => {
  const { page } = await e2e.page();
  await openLanding(page, e2e.stack.siteUrl);
  const email = uniqueEmail('keyboard');

  const stops: Focused[] = [];
  await page.keyboard.press('Tab');
  stops.push(await focused(page));
  while (stops.length < 15 && stops.at(-1)?.role !== 'input[email]') {
    await page.keyboard.press('Tab');
    stops.push(await focused(page));
  }
  // The first stop skips the header; the hero's field is reached in a few more.
  expect(stops[0]).toEqual({ role: 'a', name: 'Skip to main content', focusVisible: true });
  expect(stops.at(-1), `Tab stops: ${JSON.stringify(stops)}`).toEqual({
    role: 'input[email]',
    name: 'Email address',
    focusVisible: true,
  });
  expect(
    stops.filter((stop) => !stop.focusVisible),
    'stops without a visible focus',
  ).toEqual([]);

  await page.keyboard.type(email);
  await page.keyboard.press('Tab');
  expect(await focused(page)).toEqual({ role: 'button', name: FORMS.hero.submit, focusVisible: true });
  await page.keyboard.press('Enter');

  await waitForToast(page, TEXT.heroSuccessTitle);
  const stored = await e2e.services.firestore.documents('email_subscriptions');
  expect(stored.map((doc) => doc.data)).toMatchObject([
    { email, subscription_type: 'updates', source: 'hero_form' },
  ]);
});

it('submits with Enter in the field, as a form should', async () => {
  const { page } = await e2e.page();
  await openLanding(page, e2e.stack.siteUrl);
  const email = uniqueEmail('enter');
  const field = page.getByRole('textbox', { name: 'Email address' }).last();

  await field.focus();
  await page.keyboard.type(email);
  await page.keyboard.press('Enter');

  await waitForToast(page, TEXT.clubSuccessTitle);
  const stored = await e2e.services.firestore.documents('email_subscriptions');
  expect(stored.map((doc) => doc.data)).toMatchObject([
    { email, subscription_type: 'club', source: 'final_cta' },
  ]);
});

it('completes a keyboard-only sign-up begun before the app arrived: Tab, type, Tab, Enter, then the toast', async () => {
  const { page } = await e2e.page();
  const scripts = await holdAppScripts(page);
  await openLanding(page, e2e.stack.siteUrl, { engage: false });
  const email = uniqueEmail('keyboard-early');

  for (let stops = 0; stops < 15 && (await focused(page)).role !== 'input[email]'; stops += 1) {
    await page.keyboard.press('Tab');
  }
  expect(await focused(page)).toEqual({ role: 'input[email]', name: 'Email address', focusVisible: true });
  await page.keyboard.type(email);
  await page.keyboard.press('Tab');
  expect(await focused(page)).toEqual({ role: 'button', name: FORMS.hero.submit, focusVisible: true });
  await page.keyboard.press('Enter');

  const form = page.locator('form').first();
  await expect.poll(() => form.getAttribute('aria-busy')).toBe('true');
  // A second Enter while it waits sends nothing more.
  await page.keyboard.press('Enter');
  await scripts.release();

  await waitForToast(page, TEXT.heroSuccessTitle);
  await page.waitForTimeout(1_000);
  const stored = await e2e.services.firestore.documents('email_subscriptions');
  expect(stored.map((doc) => doc.data)).toMatchObject([
    { email, subscription_type: 'updates', source: 'hero_form' },
  ]);
  expect(stored).toHaveLength(1);
});
