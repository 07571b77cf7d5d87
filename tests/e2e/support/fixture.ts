// What every browser test file shares: the stack's services, a Chromium for the file, a clean slate before
// each case, and checks after each case that hold for every screen (no uncaught error, nothing fetched from
// outside this machine).

import { afterAll, afterEach, beforeAll, beforeEach, expect, inject } from 'vitest';
import { type Browser, launchBrowser, openPage, type TrackedPage, type ViewportName } from './browser.ts';
import { Services } from './services.ts';
import type { StackInfo } from './stack.ts';

export interface E2E {
  readonly stack: StackInfo;
  readonly services: Services;
  /** A new page for this case (closed after it). */
  page(viewport?: ViewportName): Promise<TrackedPage>;
}

export function useE2E(): E2E {
  const stack = inject('stack');
  const services = new Services(stack);
  let browser: Browser | undefined;
  let pages: TrackedPage[] = [];

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
      expect(tracked.externalRequests, 'requests that left this machine').toEqual([]);
    }
    // Leave no fault behind for the next file's first case either.
    await services.resetAll();
  });

  return {
    stack,
    services,
    async page(viewport) {
      if (!browser) throw new Error('the browser is not running');
      const tracked = await openPage(browser, viewport);
      pages.push(tracked);
      return tracked;
    },
  };
}
