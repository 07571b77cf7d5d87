// The way out, as a person takes it: sign up on the page, open the thank-you mail, follow its
// unsubscribe link to the function's page, press Unsubscribe, and nothing of the address is left in
// Firestore or MailerLite. axe checks the page before and after.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { QUEUE_TIMEOUT_MS, TEXT, UI_TIMEOUT_MS, waitForToast } from './support/app.ts';
import { useE2E } from './support/fixture.ts';
import { MAILERLITE_GROUP_NAMES } from './support/services.ts';
import { repoRoot } from './support/stack.ts';

const e2e = useE2E();

const axeSource = readFileSync(path.join(repoRoot, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/** axe's WCAG 2.2 AA rules on the page as it is: the violations, and how many rules passed. */
async function axe(page: Page): Promise<{ violations: unknown[]; passed: number }> {
  // Evaluated through the DevTools protocol: the page's policy (default-src 'none') blocks any script.
  await page.evaluate(axeSource);
  return page.evaluate(async (tags) => {
    const { axe: run } = window as unknown as {
      axe: {
        run(context: Document, options: unknown): Promise<{ violations: unknown[]; passes: unknown[] }>;
      };
    };
    const result = await run.run(document, { runOnly: { type: 'tag', values: tags } });
    return { violations: result.violations, passed: result.passes.length };
  }, WCAG_TAGS);
}

describe('the unsubscribe link in the thank-you mail', () => {
  it('erases the address from Firestore and MailerLite in one click, on a page axe finds nothing on', async () => {
    const { page, email, send } = await e2e.signupPage('hero', 'unsubscribe');
    await send();
    await waitForToast(page, TEXT.heroSuccessTitle);
    // The queues deliver the contact and the mail within moments of the toast.
    await expect
      .poll(() => e2e.services.mailerLite.groupsOf(email), { timeout: QUEUE_TIMEOUT_MS })
      .toEqual([MAILERLITE_GROUP_NAMES.updates]);
    await expect
      .poll(async () => (await e2e.services.smtp.messagesTo(email)).length, { timeout: QUEUE_TIMEOUT_MS })
      .toBe(1);

    const [mail, ...others] = await e2e.services.smtp.messagesTo(email);
    expect(others).toEqual([]);
    expect(mail?.to).toEqual([email]);
    const link =
      /^(http:\/\/127\.0\.0\.1:\d+\/demo-goody\/us-central1\/unsubscribe\?a=[\w-]+&t=[\w-]+)$/m.exec(
        mail?.text ?? '',
      )?.[1];
    expect(link, 'the one-click link in the mail').toBeDefined();
    expect(link).not.toContain('@');

    // Opening the link changes nothing: a link scanner may do just that.
    const opened = await page.goto(link as string);
    expect(opened?.status()).toBe(200);
    expect(await opened?.headerValue('content-security-policy')).toMatch(/^default-src 'none'/);
    await page
      .getByRole('heading', { level: 1, name: 'Unsubscribe from GOODY' })
      .waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await page.title()).toBe('Unsubscribe from GOODY · GOODY');
    const confirmPage = await axe(page);
    expect(confirmPage.violations).toEqual([]);
    expect(confirmPage.passed).toBeGreaterThan(5);
    expect(await e2e.services.firestore.documents('email_subscriptions')).toHaveLength(1);
    expect(await e2e.services.mailerLite.groupsOf(email)).toEqual([MAILERLITE_GROUP_NAMES.updates]);

    await page.getByRole('button', { name: 'Unsubscribe' }).click();
    await page
      .getByRole('heading', { level: 1, name: 'You’re unsubscribed' })
      .waitFor({ timeout: UI_TIMEOUT_MS });
    const donePage = await axe(page);
    expect(donePage.violations).toEqual([]);

    expect(await e2e.services.firestore.documents('email_subscriptions')).toEqual([]);
    // What stays holds no address: the one thank-you record, and the mailbox on the suppression list.
    const kept = [
      ...(await e2e.services.firestore.documents('thank_you_mails')),
      ...(await e2e.services.firestore.documents('suppressed_mailboxes')),
    ];
    expect(kept).toHaveLength(2);
    expect(JSON.stringify(kept).toLowerCase()).not.toContain(email.toLowerCase());
    expect(await page.getByText('Changed your mind? Write to').count()).toBe(1);
    expect(await e2e.services.mailerLite.groupsOf(email)).toBeUndefined();
    expect((await e2e.services.mailerLite.state()).subscribers.map((s) => s.email)).not.toContain(email);
  });
});
