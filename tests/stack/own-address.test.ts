// A person's own address wins over a stranger's +tag, on the whole local stack (`npm run emulators`: it runs
// what `npm test`'s build step built): Google's emulators (Functions, Firestore, Cloud Tasks), the launcher's
// scheduler and the two stand-ins. A stranger stores `kid+x@…` first and it is delivered (thanked, in
// MailerLite); then the person stores `kid@…`. The person is thanked at their own spelling, the one
// MailerLite contact moves to it, the mailbox gets at most two mails (one tagged, one bare), and the link in
// either mail erases the whole mailbox. Each case has a domain of its own, so the cases do not see each
// other's rows, mails or contacts.

import { describe, expect, it } from 'vitest';
import { pressOneClick } from '../support/one-click.ts';
import { emulatorsStack } from './shared-stack.ts';
import { documents, mailerLiteAccount, outbox, signUp } from './stack-state.ts';

const stack = emulatorsStack('own-address-stack.log');

const POLL = { timeout: 45_000, interval: 250 };

const storeSignup = (email: string) => signUp(stack.ports, email, 'own');
/** The rows stored at `domain`: their ids, spellings and each part's state (or reason once skipped). */
async function rowsAt(domain: string) {
  return (await documents(stack.ports, 'email_subscriptions'))
    .filter((row) => row.fields.email?.stringValue?.endsWith(`@${domain}`))
    .map((row) => {
      const parts = row.fields.delivery?.mapValue?.fields ?? {};
      const life = (name: string) => {
        const part = parts[name]?.mapValue?.fields ?? {};
        return part.state?.stringValue === 'skipped'
          ? `skipped ${part.reason?.stringValue}`
          : part.state?.stringValue;
      };
      return {
        id: row.id,
        email: row.fields.email?.stringValue,
        contact: life('contact'),
        thankYou: life('thank_you'),
      };
    });
}

/** Whether every row at `domain` has both parts settled: nothing more is delivered for them. */
async function settledAt(domain: string): Promise<boolean> {
  const rows = await rowsAt(domain);
  const settled = (state: string | undefined) => state === 'done' || state?.startsWith('skipped') === true;
  return rows.length > 0 && rows.every((row) => settled(row.contact) && settled(row.thankYou));
}

async function mailsTo(domain: string): Promise<Array<{ to: string[]; text: string }>> {
  return (await outbox(stack.ports)).filter((message) => message.to.some((to) => to.endsWith(`@${domain}`)));
}

async function contactsAt(
  domain: string,
): Promise<Array<{ email: string; groups: string[]; status: string }>> {
  return (await mailerLiteAccount(stack.ports)).subscribers.filter((s) => s.email.endsWith(`@${domain}`));
}

/**
 * A stranger's +tag spellings of kid@`domain`, stored and delivered before the person comes: one mail and one
 * contact, each at one of them (whichever task ran first). Returns the spelling thanked.
 */
async function strangerFirst(domain: string, tags: string[]): Promise<string> {
  const spellings = tags.map((tag) => `kid+${tag}@${domain}`);
  for (const email of spellings) await storeSignup(email);
  await expect.poll(() => settledAt(domain), POLL).toBe(true);
  const mails = (await mailsTo(domain)).map((mail) => mail.to);
  expect(mails).toHaveLength(1);
  expect(spellings).toContain(mails[0]?.[0]);
  const contacts = (await contactsAt(domain)).map((contact) => contact.email);
  expect(contacts).toHaveLength(1);
  expect(spellings).toContain(contacts[0]);
  return mails[0]?.[0] as string;
}

/** The person stores their own spelling: thanked there, the one contact moved there, two mails in all. */
async function personThenOwnAddress(domain: string, thankedTag: string): Promise<void> {
  const own = `kid@${domain}`;
  const id = await storeSignup(own);
  await expect
    .poll(async () => (await rowsAt(domain)).find((row) => row.id === id), POLL)
    .toMatchObject({
      contact: 'done',
      thankYou: 'done',
    });
  await expect.poll(() => settledAt(domain), POLL).toBe(true);
  expect((await mailsTo(domain)).map((mail) => mail.to)).toEqual([[thankedTag], [own]]);
  expect((await contactsAt(domain)).map((contact) => [contact.email, contact.status])).toEqual([
    [own, 'active'],
  ]);
  // The other tags of the stranger got nothing more.
  const rows = await rowsAt(domain);
  expect(
    rows
      .filter((row) => row.thankYou === 'done')
      .map((row) => row.email)
      .sort(),
  ).toEqual([own, thankedTag].sort());
}

describe("a person's own address always wins (npm run emulators)", () => {
  it('a stranger stores kid+x@ and it is delivered; the person then stores kid@: thanked there once, the one contact at kid@, two mails in all', async () => {
    const domain = 'own-one-example.org';
    await personThenOwnAddress(domain, await strangerFirst(domain, ['x']));
  }, 180_000);

  it('the same after a stranger stored five +tags first', async () => {
    const domain = 'own-five-example.org';
    const tags = ['a', 'b', 'c', 'd', 'e'];
    const thanked = await strangerFirst(domain, tags);
    expect((await rowsAt(domain)).map((row) => row.thankYou).sort()).toEqual([
      'done',
      ...Array.from({ length: 4 }, () => 'skipped already_thanked'),
    ]);
    await personThenOwnAddress(domain, thanked);
  }, 180_000);

  it("the link in the stranger's +tag mail erases the mailbox: both spellings, here and in MailerLite", async () => {
    const domain = 'own-erase-example.org';
    await personThenOwnAddress(domain, await strangerFirst(domain, ['x']));
    const ids = (await rowsAt(domain)).map((row) => row.id);
    const [tagged] = await mailsTo(domain);
    const link = /^(http:\/\/127\.0\.0\.1:\d+\/demo-goody\/us-central1\/unsubscribe\?\S+)$/m.exec(
      tagged?.text ?? '',
    )?.[1];
    expect(link, "the unsubscribe link of the +tag spelling's mail").toBeDefined();
    expect(await pressOneClick(link as string)).toBe(200);
    expect(await rowsAt(domain)).toEqual([]);
    expect(await contactsAt(domain)).toEqual([]);
    // No thank-you record names a row of the mailbox any more.
    const named = (await documents(stack.ports, 'thank_you_mails')).flatMap((record) => [
      record.fields.signup?.stringValue,
      record.fields.tagged_signup?.stringValue,
    ]);
    expect(named.filter((id) => id !== undefined && ids.includes(id))).toEqual([]);
    // Nobody is mailed again: another spelling stored now is suppressed, both parts.
    await storeSignup(`kid+again@${domain}`);
    await expect
      .poll(async () => (await rowsAt(domain)).map((row) => [row.contact, row.thankYou]), POLL)
      .toEqual([['skipped suppressed', 'skipped suppressed']]);
    expect(await mailsTo(domain)).toHaveLength(2);
    expect(await contactsAt(domain)).toEqual([]);
  }, 180_000);
});
