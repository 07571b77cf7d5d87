// WCAG 2.2 AA as axe-core checks it, on the three screens at a phone and a desktop width, and on the toasts;
// and a screenshot of each screen at each width in tests/.artifacts/screenshots/.

import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  blockAppScripts,
  holdAppScripts,
  openAdmin,
  openLanding,
  signupForm,
  TEXT,
  UI_TIMEOUT_MS,
  uniqueEmail,
  waitForApp,
  waitForToast,
} from './support/app.ts';
import type { ViewportName } from './support/browser.ts';
import { useE2E } from './support/fixture.ts';
import { repoRoot } from './support/stack.ts';

const e2e = useE2E();

const SCREENSHOT_DIR = path.join(repoRoot, 'tests', '.artifacts', 'screenshots');
const AXE_SCRIPT = path.join(repoRoot, 'node_modules', 'axe-core', 'axe.min.js');
const axeSource = readFileSync(AXE_SCRIPT, 'utf8');
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/** Waits until fonts are in and no transition or animation is running, so axe sees the settled screen. */
async function settled(page: Page): Promise<void> {
  await page.evaluate(() => document.fonts.ready.then(() => undefined));
  await page.waitForFunction(
    () => document.getAnimations().every((animation) => animation.playState !== 'running'),
    undefined,
    { timeout: UI_TIMEOUT_MS },
  );
}

interface AxeOutcome {
  violations: AxeViolation[];
  /** Rules that ran and passed: a run that checked nothing would also report no violation. */
  passed: number;
}

async function runAxe(page: Page): Promise<AxeOutcome> {
  // Not page.addScriptTag: the site's Content-Security-Policy (script-src 'self') rightly blocks an inline
  // script, and the suite keeps that policy on. An evaluation through the DevTools protocol is not a script
  // element, so it runs, as the policy would let any extension or debugger run it.
  await page.evaluate(axeSource);
  return page.evaluate(async (tags) => {
    const { axe } = window as unknown as {
      axe: {
        run(context: Document, options: unknown): Promise<{ violations: AxeViolation[]; passes: unknown[] }>;
      };
    };
    const result = await axe.run(document, { runOnly: { type: 'tag', values: tags } });
    return {
      violations: result.violations.map(({ id, impact, help, nodes }) => ({
        id,
        impact,
        help,
        nodes: nodes.map(({ target, failureSummary }) => ({ target, failureSummary })),
      })),
      passed: result.passes.length,
    };
  }, WCAG_TAGS);
}

async function expectNoViolations(page: Page): Promise<void> {
  const { violations, passed } = await runAxe(page);
  expect(violations).toEqual([]);
  expect(passed, 'axe rules that ran and passed').toBeGreaterThan(10);
}

const screens: { name: string; open(page: Page, siteUrl: string): Promise<void> }[] = [
  { name: 'landing', open: openLanding },
  { name: 'admin', open: openAdmin },
  {
    name: 'not-found',
    async open(page, siteUrl) {
      await page.goto(`${siteUrl}/no-such-page`);
      await page.getByText(TEXT.notFound, { exact: true }).waitFor({ timeout: UI_TIMEOUT_MS });
      await waitForApp(page, 'main');
    },
  },
];
const viewports: ViewportName[] = ['phone', 'desktop'];

describe.each(screens)('the $name screen', (screen) => {
  it.each(viewports)(
    'has no WCAG 2.2 AA violation axe can find at %s width (screenshot saved)',
    async (viewport) => {
      const { page } = await e2e.page(viewport);
      await screen.open(page, e2e.stack.siteUrl);
      await settled(page);

      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({
        path: path.join(SCREENSHOT_DIR, `${screen.name}-${viewport}.png`),
        fullPage: true,
      });

      await expectNoViolations(page);
    },
  );
});

describe('the toasts', () => {
  it.each(viewports)(
    'have no WCAG 2.2 AA violation at %s width, success and error alike',
    async (viewport) => {
      const { page } = await e2e.page(viewport);
      await openLanding(page, e2e.stack.siteUrl);
      const { email, submit } = signupForm(page, 'hero');
      await email.fill(uniqueEmail('axe-toast'));
      await submit.click();
      await waitForToast(page, TEXT.heroSuccessTitle);
      await e2e.services.firestore.dropConnectionsFrom(page);
      await email.fill(uniqueEmail('axe-toast-error'));
      await submit.click();
      await waitForToast(page, TEXT.connectionIssueTitle);
      await settled(page);

      await expectNoViolations(page);
    },
  );
});

describe('the landing screen before the app arrives', () => {
  it('has no WCAG 2.2 AA violation with a sign-up held, the form busy (desktop)', async () => {
    const { page } = await e2e.page('desktop');
    const scripts = await holdAppScripts(page);
    await openLanding(page, e2e.stack.siteUrl, { engage: false });
    const { form, email, submit } = signupForm(page, 'hero');
    await email.fill(uniqueEmail('axe-busy'));
    await submit.click();
    await expect.poll(() => form.getAttribute('aria-busy')).toBe('true');
    expect(await submit.isDisabled()).toBe(true);
    await settled(page);

    await expectNoViolations(page);
    await scripts.release();
    await waitForToast(page, TEXT.heroSuccessTitle);
  });

  it('has no WCAG 2.2 AA violation with the message that the app did not come (phone)', async () => {
    const { page } = await e2e.page('phone');
    await blockAppScripts(page);
    await openLanding(page, e2e.stack.siteUrl, { engage: false });
    const { form, email } = signupForm(page, 'final');
    await email.fill(uniqueEmail('axe-unavailable'));
    await email.press('Enter');
    await form.getByText(TEXT.appUnavailable, { exact: true }).waitFor({ timeout: UI_TIMEOUT_MS });
    await settled(page);

    await expectNoViolations(page);
  });
});
