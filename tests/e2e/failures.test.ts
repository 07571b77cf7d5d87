// The sign-up's failure paths, each made to really happen (connections to the database dropped, the Firestore
// emulator stopped so it answers nothing, a write its security rules refuse, MailerLite or the mail server
// down), never a mocked call.

import { describe, expect, it } from 'vitest';
import {
  liveRegions,
  openAdmin,
  QUEUE_TIMEOUT_MS,
  RETRY_TIMEOUT_MS,
  syncButton,
  TEXT,
  visibleToasts,
  waitForToast,
} from './support/app.ts';
import { type SignupPage, useE2E } from './support/fixture.ts';
import { MAILERLITE_GROUP_NAMES } from './support/services.ts';

const e2e = useE2E();

const CONNECTION_ISSUE = {
  variant: 'error',
  title: TEXT.connectionIssueTitle,
  description: TEXT.connectionIssueDescription,
};

/** The addresses of the stored sign-ups. */
const storedEmails = async () =>
  (await e2e.services.firestore.documents('email_subscriptions')).map((doc) => doc.data.email);

/** The visitor's success whatever is down behind it: the form's toast, the field cleared, the sign-up stored. */
async function expectSignedUp({ page, field, email }: SignupPage, title: string) {
  expect(await waitForToast(page, title)).toMatchObject({
    variant: 'success',
    description: TEXT.successDescription,
  });
  await expect.poll(() => field.inputValue()).toBe('');
  expect(await storedEmails()).toEqual([email]);
}

/** The failed sign-up left no trace: no stored document, no MailerLite contact, no mail. */
async function expectNothingStoredOrSent(email: string) {
  expect(await e2e.services.firestore.documents('email_subscriptions')).toEqual([]);
  expect(await e2e.services.mailerLite.groupsOf(email)).toBeUndefined();
  expect(await e2e.services.smtp.messagesTo(email)).toEqual([]);
}

describe('when the database cannot be reached', () => {
  it('says "Connection Issue", keeps the address in the field, and stores and sends nothing', async () => {
    const signup = await e2e.signupPage('hero', 'unreachable');
    const { page, email, field, submit, send } = signup;
    // Every connection from the page to Firestore is reset unanswered.
    const reconnect = await e2e.services.firestore.dropConnectionsFrom(page);

    await send();

    expect(await waitForToast(page, TEXT.connectionIssueTitle)).toEqual(CONNECTION_ISSUE);
    expect(await field.inputValue()).toBe(email);
    expect((await liveRegions(page)).alert).toBe(
      `${TEXT.connectionIssueTitle} ${TEXT.connectionIssueDescription}`,
    );

    await reconnect();
    await expectNothingStoredOrSent(email);
    expect(
      signup.console.filter((entry) => entry.text.includes(email)),
      'the address in the console',
    ).toEqual([]);

    // Once the database answers again, the same address (still in the field) goes through.
    await submit.click();
    await waitForToast(page, TEXT.heroSuccessTitle);
    expect(await storedEmails()).toEqual([email]);
  });
});

describe('when the database stops answering without closing the connection', () => {
  it('gives up after the connection-test bound: "Connection Issue", the address kept, nothing stored or sent', async () => {
    const signup = await e2e.signupPage('hero', 'hung');
    const { page, email, field, submit, send } = signup;
    // The Firestore emulator's process is stopped: connections open, and nothing ever answers.
    await e2e.services.firestore.stopAnswering();

    await send();

    // The site waits out its connection-test bound (10 s, web/src/lib/firebase.ts), then says so.
    expect(await waitForToast(page, TEXT.connectionIssueTitle)).toEqual(CONNECTION_ISSUE);
    expect(await field.inputValue()).toBe(email);
    await expect.poll(() => submit.isEnabled()).toBe(true);

    // The database answering again (the held request with it) must change nothing on the page.
    await e2e.services.firestore.clearFaults();
    await expectNothingStoredOrSent(email);
    expect((await visibleToasts(page)).map((toast) => toast.title)).toEqual([TEXT.connectionIssueTitle]);
    expect(await field.inputValue()).toBe(email);
    expect(signup.console.filter((entry) => entry.text.includes(email))).toEqual([]);
  });
});

describe('when the database refuses the insert', () => {
  it('says "Database Error" with the database\'s own message and keeps the address', async () => {
    const { page, email, field, send } = await e2e.signupPage('final', 'refused');
    // The security rules refuse every sign-up: the emulator answers PERMISSION_DENIED with its own words
    // (Cloud Firestore says "Missing or insufficient permissions.").
    await e2e.services.firestore.refuseSignups();

    await send();

    const toast = await waitForToast(page, TEXT.databaseErrorTitle);
    expect(toast).toMatchObject({ variant: 'error', title: TEXT.databaseErrorTitle });
    expect(toast.description).toMatch(/false for 'create'/);
    expect(await field.inputValue()).toBe(email);
    await e2e.services.firestore.clearFaults();
    await expectNothingStoredOrSent(email);
  });
});

describe('when MailerLite is down', () => {
  it('still signs the visitor up; the queue delivers the contact once MailerLite is back, no sync pressed', async () => {
    const signup = await e2e.signupPage('hero', 'mailerlite-down');
    const { page, console: consoleEntries, email, send } = signup;
    // Every MailerLite API request has its connection closed unanswered.
    await e2e.services.mailerLite.setFaults({ down: true });

    await send();

    await expectSignedUp(signup, TEXT.heroSuccessTitle);
    expect(await e2e.services.mailerLite.groupsOf(email), 'not in MailerLite yet').toBeUndefined();
    await expect
      .poll(async () => (await e2e.services.smtp.messagesTo(email)).map((message) => message.to), {
        timeout: QUEUE_TIMEOUT_MS,
      })
      .toEqual([[email]]);
    // The failure is logged by the function, for the team (masked address); the callable answers the
    // page as it answers every call, so that no reply tells a stranger whether an address signed up.
    // Nothing in the browser's console shows the visitor's address.
    expect(consoleEntries.filter((entry) => entry.text.includes(email))).toEqual([]);

    // MailerLite back: Cloud Tasks retries the task after its backoff, and the contact arrives.
    await e2e.services.mailerLite.clearFaults();
    await expect
      .poll(() => e2e.services.mailerLite.groupsOf(email), { timeout: RETRY_TIMEOUT_MS, interval: 1_000 })
      .toEqual([MAILERLITE_GROUP_NAMES.updates]);

    // The operator's sync finds it done: it hands nothing over, and sends nothing twice to the same group.
    await openAdmin(page, e2e.stack.siteUrl);
    await syncButton(page).click();
    expect(await waitForToast(page, TEXT.syncSuccessTitle)).toEqual({
      variant: 'success',
      title: TEXT.syncSuccessTitle,
      description: '1 sign-up is in MailerLite or unsubscribed.',
    });
    expect(await e2e.services.mailerLite.groupsOf(email)).toEqual([MAILERLITE_GROUP_NAMES.updates]);
  }, 120_000);
});

describe('when the mail server is down', () => {
  it('still signs the visitor up and adds the contact; the thank-you goes out, once, when the server is back', async () => {
    const signup = await e2e.signupPage('final', 'smtp-down');
    const { page, email, send } = signup;
    // The SMTP port refuses connections, as a stopped mail server does.
    await e2e.services.smtp.setFaults({ down: true });

    await send();

    await expectSignedUp(signup, TEXT.clubSuccessTitle);
    await expect
      .poll(() => e2e.services.mailerLite.groupsOf(email), { timeout: QUEUE_TIMEOUT_MS })
      .toEqual([MAILERLITE_GROUP_NAMES.club]);
    expect(await e2e.services.smtp.messagesTo(email)).toEqual([]);

    // The mail server back: Cloud Tasks retries the thank-you after its backoff; it goes out exactly once.
    await e2e.services.smtp.clearFaults();
    await expect
      .poll(async () => (await e2e.services.smtp.messagesTo(email)).map((message) => message.to), {
        timeout: RETRY_TIMEOUT_MS,
        interval: 1_000,
      })
      .toEqual([[email]]);

    // The spec has no duplicate check: signing up again stores a second sign-up, and sends no second mail.
    await send();
    await page.locator('[data-variant="success"]').nth(1).waitFor({ timeout: 45_000 });
    expect(await e2e.services.firestore.documents('email_subscriptions')).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await e2e.services.smtp.messagesTo(email)).map((message) => message.to)).toEqual([[email]]);
  }, 120_000);
});
