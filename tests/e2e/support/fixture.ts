// What every browser test file shares: the stack's services, a Chromium for the file, a clean slate before
// each case, and checks after each case that hold for every screen (no uncaught error, nothing fetched from
// outside this machine). In the App Check run (app-check.ts) every page uses App Check's debug provider.

import type { Locator } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, inject } from 'vitest';
import { type FormName, openLanding, signupForm, uniqueEmail } from './app.ts';
import { APP_CHECK_TOKEN, type AppCheckDebug, useAppCheckDebugProvider } from './app-check.ts';
import { type Browser, launchBrowser, openPage, type TrackedPage, type ViewportName } from './browser.ts';
import { Services } from './services.ts';
import type { StackInfo } from './stack.ts';

export interface E2EPage extends TrackedPage {
  /** In the App Check run: the debug provider's token exchanges (answered in the browser). */
  appCheck?: AppCheckDebug;
}

export interface E2E {
  readonly stack: StackInfo;
  readonly services: Services;
  /** True in the App Check run: the site is built with App Check and the callables enforce it. */
  readonly appCheck: boolean;
  /** A new page for this case (closed after it). */
  page(viewport?: ViewportName): Promise<E2EPage>;
  /**
   * A new page on the landing page, opened and engaged (openLanding), with `form`'s e-mail field and submit
   * button, and an address of the case's own, `uniqueEmail(label)`: how a case that signs up begins.
   */
  signupPage(form: FormName, label: string): Promise<SignupPage>;
}

export interface SignupPage extends E2EPage {
  email: string;
  field: Locator;
  submit: Locator;
  /** The visitor types `email` into the field and presses the button. */
  send(): Promise<void>;
}

export function useE2E(): E2E {
  const stack = inject('stack');
  const appCheck = inject('appCheck') ?? false;
  const services = new Services(stack, appCheck ? APP_CHECK_TOKEN : undefined);
  let browser: Browser | undefined;
  let pages: E2EPage[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
  });

  beforeEach(async () => {
    await services.resetAll();
  });

  afterEach(async () => {
    const open = pages;
    pages = [];
    await Promise.all(open.map((tracked) => tracked.page.close()));
    for (const tracked of open) {
      expect(tracked.pageErrors, 'uncaught errors in the page').toEqual([]);
      expect(
        tracked.externalRequests.filter((url) => !tracked.appCheck?.answersHere(url)),
        'requests that left this machine',
      ).toEqual([]);
    }
    // Leave no fault behind for the next file's first case either.
    await services.resetAll();
  });

  async function page(viewport?: ViewportName): Promise<E2EPage> {
    if (!browser) throw new Error('the browser is not running');
    const tracked: E2EPage = await openPage(browser, viewport);
    pages.push(tracked);
    if (appCheck) tracked.appCheck = await useAppCheckDebugProvider(tracked.page);
    return tracked;
  }

  return {
    stack,
    services,
    appCheck,
    page,
    async signupPage(form, label) {
      const tracked = await page();
      await openLanding(tracked.page, stack.siteUrl);
      const { email: field, submit } = signupForm(tracked.page, form);
      const email = uniqueEmail(label);
      const send = async () => {
        await field.fill(email);
        await submit.click();
      };
      return { ...tracked, email, field, submit, send };
    },
  };
}
