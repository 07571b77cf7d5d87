// The row is the outbox, on the whole local stack: Google's emulators (Functions, Firestore, Cloud Tasks), the
// launcher's scheduler and the two stand-ins, one stack for the file (`npm run emulators`: it runs what
// `npm test`'s build step built). What a stranger sends makes no work; a stored row is delivered at the
// spelling stored, whatever its tasks' retries and the mail budget do. Times are compressed for the test:
// tasks give up after two attempts a second apart, the reconciler runs every 3 s, the mail budget's "hour"
// is 12 s long and holds 2 mails.

import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { DEV_UNSUBSCRIBE_SECRET } from '../../dev/stack.ts';
import { unsubscribeLink } from '../../functions/src/privacy/unsubscribe-token.ts';
import { pressOneClick } from '../support/one-click.ts';
import { emulatorsStack } from './shared-stack.ts';
import { mailerLiteAccount, putFaults, rowParts, signUp, outbox as stackOutbox } from './stack-state.ts';

const BUDGET_WINDOW_S = 12;
const BUDGET_PER_WINDOW = 2;

const stack = emulatorsStack('delivery-stack.log', {
  GOODY_DELIVERY_MAX_ATTEMPTS: '2',
  GOODY_DELIVERY_MAX_RETRY_SECONDS: '1',
  GOODY_DELIVERY_MIN_BACKOFF_SECONDS: '1',
  GOODY_DELIVERY_QUEUE_WAIT_SECONDS: '2',
  GOODY_SCHEDULES: 'reconcile-deliveries=every 3 seconds',
  GOODY_MAIL_PER_HOUR: String(BUDGET_PER_WINDOW),
  GOODY_MAIL_BUDGET_WINDOW_SECONDS: String(BUDGET_WINDOW_S),
});

const local = (port: number) => `http://127.0.0.1:${port}`;

/** A callable through the site's origin, as the page calls it (Hosting's rewrite); resolves with the status. */
async function call(name: string, data: unknown): Promise<number> {
  const response = await fetch(`${local(stack.ports.GOODY_HOSTING_PORT)}/api/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ data }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** Both callables, as the page makes them after its insert (the hero form's bodies). */
async function bothCallables(email: string): Promise<number[]> {
  return [
    await call('add-contact-to-mailerlite', { email, source: 'hero_form' }),
    await call('send-thank-you-email', { email }),
  ];
}

const storeSignup = (email: string) => signUp(stack.ports, email, 'row');
const part = async (id: string, name: 'contact' | 'thank_you') => (await rowParts(stack.ports, id))[name];
const mailerLite = () => mailerLiteAccount(stack.ports);
const mailerLiteFaults = (faults: Record<string, unknown>) =>
  putFaults(stack.ports.GOODY_MAILERLITE_PORT, faults);
const outbox = () => stackOutbox(stack.ports);
const mailsTo = async (pattern: RegExp) =>
  (await outbox()).filter((message) => message.to.some((to) => pattern.test(to)));

/** Tasks the Cloud Tasks emulator took in the last five minutes, over every queue. */
async function tasksAdded(): Promise<number> {
  const stats = (await (await fetch(`${local(stack.ports.GOODY_TASKS_PORT)}/queueStats`)).json()) as Record<
    string,
    { tasksAdded: number }
  >;
  return Math.round(Object.values(stats).reduce((sum, queue) => sum + queue.tasksAdded * 5, 0));
}

describe('the row is the outbox (npm run emulators)', () => {
  // First, on a stack with no row yet: nothing else can add a task while the guesses run.
  it("1,000 strangers' guesses through both callables enqueue no task at the Cloud Tasks emulator", async () => {
    expect(await tasksAdded()).toBe(0);
    const guesses = Array.from({ length: 1_000 }, (_, i) => `guess-${i}@example.net`);
    const started = Date.now();
    for (let i = 0; i < guesses.length; i += 25) {
      const statuses = await Promise.all(guesses.slice(i, i + 25).map(bothCallables));
      expect(statuses.flat().every((status) => status === 200)).toBe(true);
    }
    // The window the emulator counts in is five minutes: the guesses fit in it.
    expect(Date.now() - started).toBeLessThan(5 * 60_000);
    expect(await tasksAdded()).toBe(0);
    expect((await mailerLite()).requests.filter((r) => r.path.startsWith('/api/'))).toEqual([]);
    expect(await outbox()).toEqual([]);
  }, 300_000);

  it.each([
    ['a +tag spelling', 'kid.row+x@school-example.org', 'Kid.Row@School-Example.org'],
    [
      'a case change of a stored mixed-case address',
      'MAYA.ROW@School-Example.org',
      'Maya.Row@School-Example.org',
    ],
  ])(
    "a stranger's calls with %s just before the person signs up: thanked once at the spelling typed, in MailerLite as typed",
    async (_label, stranger, typed) => {
      expect(await bothCallables(stranger)).toEqual([200, 200]);
      const id = await storeSignup(typed);
      expect(await bothCallables(typed)).toEqual([200, 200]);
      const mailbox = new RegExp(`^${typed.split('@')[0]?.split('.')[0]}`, 'i');
      await expect.poll(() => mailsTo(mailbox), { timeout: 30_000, interval: 250 }).toHaveLength(1);
      await expect
        .poll(async () => (await mailerLite()).subscribers.filter((s) => mailbox.test(s.email)), {
          timeout: 30_000,
          interval: 250,
        })
        .toHaveLength(1);
      // Long enough for a stranger's task (were there one) and the reconciler to have run.
      await delay(6_000);
      // To the spelling typed (the outbox keeps the domain as SMTP carries it, in lower case).
      const [local_, domain] = typed.split('@') as [string, string];
      expect((await mailsTo(mailbox)).map((message) => message.to)).toEqual([
        [`${local_}@${domain.toLowerCase()}`],
      ]);
      expect(
        (await mailerLite()).subscribers.filter((s) => mailbox.test(s.email)).map((s) => s.email),
      ).toEqual([typed.toLowerCase()]);
      expect(await part(id, 'contact')).toMatchObject({ state: 'done' });
      expect(await part(id, 'thank_you')).toMatchObject({ state: 'done' });
    },
    60_000,
  );

  it('a row whose contact tasks ran out of retries (MailerLite down) is delivered by the reconciler on its schedule', async () => {
    await mailerLiteFaults({ down: true });
    const email = 'outlasted@example.org';
    const id = await storeSignup(email);
    try {
      // Two attempts a second apart, then Cloud Tasks gives up; the part stays pending on the row.
      await expect
        .poll(async () => (await part(id, 'contact')).attempts ?? 0, { timeout: 30_000, interval: 250 })
        .toBeGreaterThanOrEqual(2);
      // Long enough for every task enqueued so far (the reconciler's too) to have given up as well.
      await delay(4_000);
      expect(await part(id, 'contact')).toMatchObject({ state: 'pending' });
      expect((await mailerLite()).subscribers.filter((s) => s.email === email)).toEqual([]);
    } finally {
      await mailerLiteFaults({ down: false });
    }
    // Nobody calls anything: the launcher fires reconcile-deliveries, which enqueues the next round.
    await expect
      .poll(async () => (await mailerLite()).subscribers.filter((s) => s.email === email), {
        timeout: 45_000,
        interval: 500,
      })
      .toHaveLength(1);
    await expect.poll(() => part(id, 'contact'), { timeout: 10_000 }).toMatchObject({ state: 'done' });
    expect((await part(id, 'contact')).round).toBeGreaterThanOrEqual(1);
    expect(stack.run.output()).toMatch(/"event":"reconcile\.run"/);
  }, 120_000);

  it("a thank-you held by the mail budget books the next window and is sent in it, past its task's retry window", async () => {
    const windowMs = BUDGET_WINDOW_S * 1000;
    // The case needs the three sign-ups' tasks to run in the window they were stored in. On a loaded machine
    // one may run only after that window ended (then it simply sends in the next one, held by nothing): such
    // a try proves nothing and is made again, in a later window with other addresses.
    let emails: string[] = [];
    let ids: string[] = [];
    let ofThisTry = /^budget-/;
    const parts = async () => Promise.all(ids.map((id) => part(id, 'thank_you')));
    for (let attempt = 1; ; attempt += 1) {
      // Wait for the start of a budget window, so the three sign-ups fall in one.
      await delay(windowMs - (Date.now() % windowMs) + 200);
      const windowEnd = Date.now() - (Date.now() % windowMs) + windowMs;
      emails = ['a', 'b', 'c'].map((name) => `budget-${attempt}-${name}@example.org`);
      ofThisTry = new RegExp(`^budget-${attempt}-`);
      ids = [];
      for (const email of emails) ids.push(await storeSignup(email));
      // Two go out in this window; the third books the next one and its task ends (no retry spent: its task's
      // retries, 2 attempts in a second, are long over by the next window), pending on its next round, which
      // Cloud Tasks holds until the next window starts.
      let sent = 0;
      let held: Awaited<ReturnType<typeof parts>> = [];
      while ((sent < BUDGET_PER_WINDOW || held.length === 0) && Date.now() < windowEnd - 250) {
        await delay(250);
        sent = (await mailsTo(ofThisTry)).length;
        held = (await parts()).filter((p) => p.reason === 'mail_budget');
      }
      if (sent === BUDGET_PER_WINDOW && held.length > 0) {
        // Its round is the next one, or later where the reconciler re-drove it first (a loaded machine).
        expect(held).toEqual([expect.objectContaining({ state: 'pending', reason: 'mail_budget' })]);
        break;
      }
      if (attempt === 3)
        throw new Error(`in 3 tries the sign-ups were never handled in their window (${sent} sent)`);
      await expect
        .poll(() => mailsTo(ofThisTry), { timeout: 2 * windowMs + 15_000 })
        .toHaveLength(emails.length);
    }
    // Nobody calls anything: the next round runs in the next window, on the slot it booked.
    await expect
      .poll(() => mailsTo(ofThisTry), { timeout: windowMs + 15_000, interval: 500 })
      .toHaveLength(emails.length);
    expect((await mailsTo(ofThisTry)).map((m) => m.to[0]).sort()).toEqual(emails);
    // Each row done: the worker saves `sent`, then settles the part, after the relay accepted the mail, so the
    // last part settles a moment after its mail is in the outbox.
    await expect
      .poll(async () => (await parts()).map((p) => p.state), { timeout: 10_000, interval: 250 })
      .toEqual(['done', 'done', 'done']);
    // Each once.
    expect((await mailsTo(ofThisTry)).map((m) => m.to[0]).sort()).toEqual(emails);
  }, 180_000);

  it('an erasure before the tasks have delivered leaves nothing in MailerLite and sends nothing', async () => {
    const smtpFaults = (faults: Record<string, unknown>) =>
      putFaults(stack.ports.GOODY_SMTP_API_PORT, faults);
    const email = 'erased-first@example.org';
    await Promise.all([mailerLiteFaults({ down: true }), smtpFaults({ down: true })]);
    let id: string;
    try {
      id = await storeSignup(email);
      // Both tasks have tried and failed: the row's delivery is still to come when the person leaves.
      const attempted = async () =>
        Math.min((await part(id, 'contact')).attempts ?? 0, (await part(id, 'thank_you')).attempts ?? 0);
      await expect.poll(attempted, { timeout: 30_000, interval: 250 }).toBeGreaterThanOrEqual(1);
      // The person presses the one-click link: the erasure writes the mailbox's suppression entry ahead and
      // deletes its rows (MailerLite's forget is finished by the erasure's own task once it answers).
      const link = unsubscribeLink(
        `${local(stack.ports.GOODY_FUNCTIONS_PORT)}/demo-goody/us-central1/unsubscribe`,
        DEV_UNSUBSCRIBE_SECRET,
        email,
      );
      expect(await pressOneClick(link)).toBe(200);
      // An attempt that read the row before the erasure meets the services still down.
      await delay(3_000);
    } finally {
      await Promise.all([mailerLiteFaults({ down: false }), smtpFaults({ down: false })]);
    }
    // The tasks' retries and the reconciler's runs come and go: the row is gone, so nothing is delivered.
    await delay(10_000);
    expect((await mailerLite()).subscribers.filter((s) => s.email === email)).toEqual([]);
    expect(await mailsTo(/^erased-first@/)).toEqual([]);
  }, 60_000);
});
