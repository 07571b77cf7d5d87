// Any path without a screen of its own: the not-found page, its way home, and the path logged.

import { expect, it } from 'vitest';
import { openLanding, TEXT, waitForApp } from './support/app.ts';
import { useE2E } from './support/fixture.ts';

const e2e = useE2E();

it('says "Oops! Page not found.", logs the missing path to the console, and Return to Home goes home', async () => {
  const { page, console: consoleEntries } = await e2e.page();
  const missing = `/e2e-missing-${Date.now().toString(36)}/deeper`;

  await page.goto(`${e2e.stack.siteUrl}${missing}?from=e2e`);

  await page.getByText(TEXT.notFound, { exact: true }).waitFor();
  await waitForApp(page, 'main');
  expect(await page.title()).toContain('Page not found');
  await expect
    .poll(() => consoleEntries.filter((entry) => entry.type === 'error' && entry.text.includes(missing)))
    .toHaveLength(1);

  await page.getByRole('link', { name: TEXT.returnHome }).click();

  await page.waitForURL(`${e2e.stack.siteUrl}/`);
  // The landing page, working: its hero heading and a hydrated form.
  await openLanding(page, e2e.stack.siteUrl);
  expect(await page.getByText(TEXT.notFound).count()).toBe(0);
});

it('is what /admin/anything and other unknown paths below a real route show', async () => {
  const { page } = await e2e.page();
  await page.goto(`${e2e.stack.siteUrl}/admin/unknown`);
  await page.getByText(TEXT.notFound, { exact: true }).waitFor();
  expect(await page.getByRole('link', { name: TEXT.returnHome }).isVisible()).toBe(true);
});
