// The two sign-up forms end to end: the visitor's toast, and what really landed in Firestore, MailerLite and
// the outbox.

import { describe, expect, it } from 'vitest';
import {
  type FormName,
  liveRegions,
  openLanding,
  QUEUE_TIMEOUT_MS,
  signupForm,
  TEXT,
  uniqueEmail,
  visibleToasts,
  waitForToast,
} from './support/app.ts';
import { useE2E } from './support/fixture.ts';
import { MAILERLITE_GROUP_NAMES } from './support/services.ts';

const e2e = useE2E();

const cases: {
  form: FormName;
  title: string;
  subscriptionType: 'updates' | 'club';
  source: 'hero_form' | 'final_cta';
  mailSubject: string;
}[] = [
  {
    form: 'hero',
    title: TEXT.heroSuccessTitle,
    subscriptionType: 'updates',
    source: 'hero_form',
    mailSubject: "You're on the GOODY list 🎉",
  },
  {
    form: 'final',
    title: TEXT.clubSuccessTitle,
    subscriptionType: 'club',
    source: 'final_cta',
    mailSubject: 'Welcome to the GOODY Club 🌟',
  },
];

describe.each(cases)('the $form form ($source)', ({ form, title, subscriptionType, source, mailSubject }) => {
  it(`stores the sign-up, adds the contact to the ${subscriptionType} group, sends one thank-you, and says "${title}"`, async () => {
    const { page } = await e2e.page();
    await openLanding(page, e2e.stack.siteUrl);
    const email = uniqueEmail(form);
    const { email: field, submit } = signupForm(page, form);

    const before = Date.now();
    await field.fill(email);
    await submit.click();

    const toast = await waitForToast(page, title);
    expect(toast).toEqual({ variant: 'success', title, description: TEXT.successDescription });
    await expect.poll(() => field.inputValue(), { message: 'the field is cleared' }).toBe('');
    // Screen readers are told the same, politely.
    expect(await liveRegions(page)).toEqual({ status: `${title} ${TEXT.successDescription}`, alert: '' });

    // Firestore: one document with exactly the four fields the page writes, created_at a server timestamp
    // from just now (the index-signup trigger adds the mailbox key beside them a moment later).
    const documents = await e2e.services.firestore.documents('email_subscriptions');
    expect(documents).toHaveLength(1);
    const [stored] = documents;
    const pageFields = Object.keys(stored?.fields ?? {}).filter((key) => key !== 'mailbox_key');
    expect(pageFields.sort()).toEqual(['created_at', 'email', 'source', 'subscription_type']);
    expect(stored?.data).toMatchObject({ email, subscription_type: subscriptionType, source });
    expect(stored?.fields.created_at).toHaveProperty('timestampValue');
    const createdAt = Date.parse(String(stored?.data.created_at));
    expect(createdAt).toBeGreaterThanOrEqual(before - 5_000);
    expect(createdAt).toBeLessThanOrEqual(Date.now() + 5_000);

    // The two callables only queued the work; Cloud Tasks (its emulator here) runs it within moments.
    // MailerLite: the contact, in the group of this form's subscription type only.
    await expect
      .poll(() => e2e.services.mailerLite.groupsOf(email), { timeout: QUEUE_TIMEOUT_MS })
      .toEqual([MAILERLITE_GROUP_NAMES[subscriptionType]]);

    // The outbox: exactly one thank-you, to this address, in this form's words.
    await expect
      .poll(async () => (await e2e.services.smtp.messages()).length, { timeout: QUEUE_TIMEOUT_MS })
      .toBe(1);
    const messages = await e2e.services.smtp.messages();
    expect(messages.map(({ to, subject }) => ({ to, subject }))).toEqual([
      { to: [email], subject: mailSubject },
    ]);
  });
});

it('lets the browser stop an empty or malformed address: nothing is sent, no toast', async () => {
  const { page } = await e2e.page();
  await openLanding(page, e2e.stack.siteUrl);
  const { email: field, submit } = signupForm(page, 'hero');

  await submit.click();
  expect(await field.evaluate((input: HTMLInputElement) => input.validity.valueMissing)).toBe(true);
  await field.fill('not-an-address');
  await submit.click();
  expect(await field.evaluate((input: HTMLInputElement) => input.validity.typeMismatch)).toBe(true);

  // A valid sign-up afterwards: had either blocked submit gone through, it would have been stored first.
  const email = uniqueEmail('after-invalid');
  await field.fill(email);
  await submit.click();
  await waitForToast(page, TEXT.heroSuccessTitle);
  expect(
    (await e2e.services.firestore.documents('email_subscriptions')).map((doc) => doc.data.email),
  ).toEqual([email]);
  expect(await visibleToasts(page)).toHaveLength(1);
});

it('connects ahead to the backend the sign-up calls once the visitor engages, and not for a reader', async () => {
  const { page } = await e2e.page();
  const preconnected = () =>
    page.evaluate(() =>
      Array.from(document.querySelectorAll('link[rel="preconnect"]'), (link) => ({
        href: link.getAttribute('href'),
        crossOrigin: link.getAttribute('crossorigin'),
      })),
    );
  await openLanding(page, e2e.stack.siteUrl, { engage: false });
  expect(await preconnected()).toEqual([]);
  await signupForm(page, 'hero').email.focus();
  // The page's own build names the stack it runs on: its Firestore and Functions emulators, anonymous like
  // the SDKs' requests.
  await expect.poll(preconnected).toEqual(
    [e2e.stack.firestoreUrl, e2e.stack.functionsEmulatorUrl].map((url) => ({
      href: new URL(url).origin,
      crossOrigin: '',
    })),
  );
});
