// Debian's Chromium driven by playwright-core: one persistent context per test file, on a fresh profile
// directory that is removed afterwards, and a page per case that records what the console and the network saw.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, type ConsoleMessage, chromium, type Page } from 'playwright-core';
import { chromiumArgs, findChromium } from '../chromium.ts';

export const VIEWPORTS = {
  phone: { width: 390, height: 844 },
  desktop: { width: 1280, height: 800 },
} as const;

export type ViewportName = keyof typeof VIEWPORTS;

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH || findChromium();
  if (!executablePath)
    throw new Error('No Chromium: install the Debian package chromium, or set CHROMIUM_PATH.');
  const userDataDir = mkdtempSync(path.join(os.tmpdir(), 'goody-e2e-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    args: chromiumArgs,
    headless: true,
    viewport: VIEWPORTS.desktop,
  });
  return {
    context,
    async close() {
      try {
        await context.close();
      } finally {
        rmSync(userDataDir, { recursive: true, force: true });
      }
    },
  };
}

export interface ConsoleEntry {
  type: string;
  text: string;
}

/** A page and what happened on it. */
export interface TrackedPage {
  page: Page;
  console: ConsoleEntry[];
  /** Uncaught exceptions in the page. */
  pageErrors: string[];
  /** Requests to anything but loopback: the site must need nothing from the internet here. */
  externalRequests: string[];
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export async function openPage(browser: Browser, viewport: ViewportName = 'desktop'): Promise<TrackedPage> {
  const page = await browser.context.newPage();
  await page.setViewportSize(VIEWPORTS[viewport]);
  const tracked: TrackedPage = { page, console: [], pageErrors: [], externalRequests: [] };
  page.on('console', (message: ConsoleMessage) =>
    tracked.console.push({ type: message.type(), text: message.text() }),
  );
  page.on('pageerror', (error) => tracked.pageErrors.push(String(error)));
  page.on('request', (request) => {
    const url = new URL(request.url());
    if ((url.protocol === 'http:' || url.protocol === 'https:') && !LOOPBACK.has(url.hostname)) {
      tracked.externalRequests.push(request.url());
    }
  });
  return tracked;
}
