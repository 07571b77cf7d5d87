// The site as a visitor sees it: its screens, its two sign-up forms and its toasts, found by role and text
// (what a person or a screen reader finds), never by class names.

import type { Locator, Page, Route } from 'playwright-core';

/** The product's fixed words (docs/product.md, Error catalogue and toasts), kept here rather than imported from web/ so a changed text fails a test. */
export const TEXT = {
  heroSuccessTitle: 'Welcome to GOODY! 🎉',
  clubSuccessTitle: 'Welcome to the GOODY Club! 🌟',
  successDescription: "You're signed up! Email synced to both platforms.",
  connectionIssueTitle: 'Connection Issue',
  connectionIssueDescription: 'Please check your internet connection and try again.',
  databaseErrorTitle: 'Database Error',
  syncButton: 'Sync to the marketing service',
  syncing: 'Syncing...',
  syncSuccessTitle: 'Sync Successful!',
  syncFailedTitle: 'Sync Failed',
  notFound: 'Oops! Page not found.',
  returnHome: 'Return to Home',
  backToHome: 'Back to Home',
  /** Under a form whose sign-up was captured before the app, when the app has not come in time. */
  appUnavailable:
    'The page has not finished loading, so your address was not sent yet. Please check your connection and try again.',
} as const;

export const FORMS = {
  hero: { submit: 'Get Early Access' },
  final: { submit: 'Join the Club' },
} as const;

export type FormName = keyof typeof FORMS;

/** Waits for the toasts (MUI snackbars) and the app under them. Generous: a cold function worker is slow. */
export const UI_TIMEOUT_MS = 45_000;
/** The callables only queue the work: the first task of a function also starts its worker (a cold start). */
export const QUEUE_TIMEOUT_MS = 20_000;
/** A failed task comes back after Cloud Tasks' backoff (10 s, then 20 s, 40 s…: functions/src/delivery/queue.ts). */
export const RETRY_TIMEOUT_MS = 75_000;

/**
 * Resolves once React has taken over `selector`'s element (hydrated a prerendered page, or rendered it on the
 * client). Before that a click on a prerendered form would do the browser's own submit, not the app's.
 */
export async function waitForApp(page: Page, selector = '#root > *'): Promise<void> {
  await page.waitForFunction(
    (sel) => {
      const element = document.querySelector(sel);
      return element !== null && Object.keys(element).some((key) => key.startsWith('__reactFiber$'));
    },
    selector,
    { timeout: UI_TIMEOUT_MS },
  );
}

/**
 * Opens the landing page. It runs no app code until the visitor engages with a form or the header, so by
 * default this engages (a pointer press on the hero form, which moves no focus) and waits for the app to
 * take the forms over; `{ engage: false }` leaves the page as a visitor who has not touched it yet finds it.
 */
export async function openLanding(
  page: Page,
  siteUrl: string,
  { engage = true }: { engage?: boolean } = {},
): Promise<void> {
  await page.goto(`${siteUrl}/`);
  await page.getByRole('heading', { level: 1 }).waitFor({ timeout: UI_TIMEOUT_MS });
  if (!engage) return;
  await page.locator('form').first().dispatchEvent('pointerdown');
  await waitForApp(page, 'form');
  // Hydrated is not yet live: each form takes over from the page's script in an effect just after.
  await page.waitForFunction(
    () => (window as { __goodySignupCapture?: { live: string[] } }).__goodySignupCapture?.live.length === 2,
    undefined,
    { timeout: UI_TIMEOUT_MS },
  );
}

/**
 * Holds back every app script (/assets/*.js) until `release()`, as a slow link would: the page paints from
 * its HTML and its inline script, and nothing of the app runs. `block()` instead makes them fail for good.
 */
export async function holdAppScripts(page: Page): Promise<{ release(): Promise<void>; requested(): number }> {
  const held: Route[] = [];
  let released = false;
  let requested = 0;
  await page.route('**/assets/*.js', async (route) => {
    requested += 1;
    if (released) await route.continue();
    else held.push(route);
  });
  return {
    requested: () => requested,
    async release() {
      released = true;
      await Promise.all(held.splice(0).map((route) => route.continue()));
    },
  };
}

export async function blockAppScripts(page: Page): Promise<void> {
  await page.route('**/assets/*.js', (route) => route.abort('connectionfailed'));
}

export async function openAdmin(page: Page, siteUrl: string): Promise<void> {
  await page.goto(`${siteUrl}/admin`);
  await syncButton(page).waitFor({ timeout: UI_TIMEOUT_MS });
  await waitForApp(page, 'main');
}

export function signupForm(page: Page, name: FormName): { form: Locator; email: Locator; submit: Locator } {
  const submit = page.getByRole('button', { name: FORMS[name].submit, exact: true });
  const form = page.locator('form').filter({ has: submit });
  return { form, email: form.getByRole('textbox', { name: 'Email address' }), submit };
}

export function syncButton(page: Page): Locator {
  return page
    .getByRole('button', { name: TEXT.syncButton, exact: true })
    .or(page.getByRole('button', { name: TEXT.syncing, exact: true }));
}

export interface ToastText {
  variant: 'success' | 'error';
  title: string;
  description: string;
}

/**
 * Waits for the visible toast with this title and returns what it says. The same words are also in the
 * hidden live regions for screen readers; the visible toast is the element that carries the variant.
 */
export async function waitForToast(page: Page, title: string): Promise<ToastText> {
  const toast = page.locator('[data-variant]').filter({ hasText: title }).last();
  try {
    await toast.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
  } catch (error) {
    // Say what the page showed instead: the toasts still on screen and the last announcements.
    const shown = await visibleToasts(page).catch(() => []);
    const told = await liveRegions(page).catch(() => undefined);
    throw new Error(
      `no toast titled "${title}" within ${UI_TIMEOUT_MS / 1000} s; on screen: ${JSON.stringify(shown)}; ` +
        `last announced: ${JSON.stringify(told)}`,
      { cause: error },
    );
  }
  const [shownTitle, description] = await toast.locator('p').allInnerTexts();
  return {
    variant: (await toast.getAttribute('data-variant')) as ToastText['variant'],
    title: shownTitle ?? '',
    description: description ?? '',
  };
}

/** The toasts on screen now, in order. */
export async function visibleToasts(page: Page): Promise<ToastText[]> {
  const toasts = await page.locator('[data-variant]').all();
  return Promise.all(
    toasts.map(async (toast) => {
      const [title, description] = await toast.locator('p').allInnerTexts();
      return {
        variant: (await toast.getAttribute('data-variant')) as ToastText['variant'],
        title: title ?? '',
        description: description ?? '',
      };
    }),
  );
}

/** What screen readers were told last: the polite (success) and assertive (error) live regions. */
export async function liveRegions(page: Page): Promise<{ status: string; alert: string }> {
  const region = page.getByRole('region', { name: 'Notifications' });
  return {
    status: (await region.getByRole('status').textContent()) ?? '',
    alert: (await region.getByRole('alert').textContent()) ?? '',
  };
}

/** A distinct, valid address per case, so cases never see each other's MailerLite contacts. */
export function uniqueEmail(label: string): string {
  const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  return `e2e-${label}-${tag}@example.com`;
}
