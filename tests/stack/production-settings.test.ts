// Only the person ends a part, on the whole local stack with the delivery workers' retries at their production
// values (Cloud Tasks' backoff from 10 s doubling to 10 minutes, two days of retries: functions/src/delivery/queue.ts,
// RETRY; none of GOODY_DELIVERY_MAX_ATTEMPTS, _MAX_RETRY_SECONDS, _MIN_BACKOFF_SECONDS is set). Our setup's
// refusals (the relay refusing our sender, MailerLite refusing our key, Cloud Tasks refusing enqueues) leave the
// part pending and say so on the row, and each sign-up is delivered once the fault is fixed; the relay refusing
// the person's own mailbox (5.1.1, 5.1.2, 5.1.3, 5.1.6 or 5.2.1 at RCPT) ends that part at once. One stack for the file (`npm run emulators`:
// it runs what `npm test`'s build step built), the four cases at once where they do not disturb each other,
// since most of their time is spent waiting out a minute-long fault and the backoff after it.
//
// Compressed, and only for the lost enqueue: how soon a part whose enqueue never answered is due
// (DELIVERY_CONFIRM_SECONDS: 20 s here, 4 minutes in production, functions/src/delivery/part-life.ts CONFIRM_WAIT_MS)
// and the reconciler's period (every 5 s here, every 10 minutes in production, RECONCILE_SCHEDULE), whose sum in
// production, 14 minutes, is the bound within which such a part is re-driven.

import { setTimeout as delay } from 'node:timers/promises';
import { beforeAll, describe, type ExpectStatic, it } from 'vitest';
import { emulatorsStack } from './shared-stack.ts';
import { mailerLiteAccount, outbox, putFaults, rowParts, signUp as storeSignup } from './stack-state.ts';

/** How long each fault lasts: "for about a minute", as an operator takes to notice and fix it. */
const FAULT_MS = 60_000;
/** DELIVERY_CONFIRM_SECONDS here; production's is 240 (4 minutes). */
const CONFIRM_S = 20;
/** The reconciler's period here; production's is 600 (every 10 minutes). */
const RECONCILE_S = 5;

/**
 * How soon after the fix a part that waits for our setup is tried again, after a fault of FAULT_MS begun before
 * its first attempt. Cloud Tasks' backoff at production values is 10, 20, 40, 80 s...: a minute after the first
 * attempt the task waits out the third (its fourth attempt comes 70 s after the first), so the next attempt comes
 * within 40 s of the fix; 80 s (the next backoff) leaves room for the emulator's dispatch loop and the attempts'
 * own time. Production's bound, 15 minutes of the fix whatever the outage's length, is the backoff's cap
 * (10 minutes) and the attempt: a one-minute fault reaches no such backoff.
 */
const RETRIED_AFTER_FIX_MS = 80_000;
/** The same bound for a lost enqueue, compressed: due CONFIRM_S after the commit, re-driven on the next run. */
const REDRIVEN_AFTER_FIX_MS = (CONFIRM_S + RECONCILE_S) * 1000;
/** Delivered (the worker's attempt, the relay or MailerLite) once the task is dispatched. */
const DELIVERY_MS = 10_000;

const stack = emulatorsStack('production-settings-stack.log', {
  GOODY_DELIVERY_CONFIRM_SECONDS: String(CONFIRM_S),
  GOODY_SCHEDULES: `reconcile-deliveries=every ${RECONCILE_S} seconds`,
  // The Cloud Tasks emulator takes an enqueue fault at /__control/faults on its own port
  // (dev/launcher/tasks-emulator-pacing.cjs); `npm start` has none.
  GOODY_TASKS_EMULATOR_FAULTS: 'on',
});

const local = (port: number) => `http://127.0.0.1:${port}`;

const signUp = (email: string) => storeSignup(stack.ports, email);
const parts = (id: string) => rowParts(stack.ports, id);
const mailsTo = async (email: string) =>
  (await outbox(stack.ports)).filter((message) => message.to.includes(email)).length;
const contactsOf = async (email: string) =>
  (await mailerLiteAccount(stack.ports)).subscribers.filter((s) => s.email === email).length;
const faults = putFaults;
/** GET /__control/faults: what the stand-in or the emulator at `port` is doing now, and has done. */
async function faultsNow(port: number): Promise<Record<string, unknown>> {
  return (await (await fetch(`${local(port)}/__control/faults`)).json()) as Record<string, unknown>;
}

/**
 * Polls until `count(email)` is at least 1 for every address, or `timeoutMs` has passed: when each was first
 * seen, in ms after `since` (a poll's interval late at most). Addresses never seen are absent.
 */
async function firstSeen(
  emails: readonly string[],
  count: (email: string) => Promise<number>,
  since: number,
  timeoutMs: number,
): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  const deadline = since + timeoutMs;
  while (seen.size < emails.length && Date.now() < deadline) {
    for (const email of emails) {
      if (!seen.has(email) && (await count(email)) > 0) seen.set(email, Date.now() - since);
    }
    if (seen.size < emails.length) await delay(250);
  }
  return seen;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const figures = (emails: readonly string[], seen: Map<string, number>) =>
  emails.map((email) => (seen.has(email) ? seconds(seen.get(email) ?? 0) : 'never')).join(', ');

/** Opened once, whatever the case that opens it came to: a case waiting on it is never left hanging. */
function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}
type Gate = ReturnType<typeof gate>;
/** Cases 1 and 2's sign-ups have their tasks (both parts tried): no enqueue of theirs is left to refuse. */
const relaySignupsQueued = gate();
const keySignupsQueued = gate();
/** The relay takes our sender again; MailerLite takes our key again. */
const relayFixed = gate();
const keyFixed = gate();
/** The Cloud Tasks emulator takes enqueues again. */
const enqueuesBack = gate();

/**
 * A fresh stack's first sign-ups wait for the function workers to load (a cold start takes seconds, and up to
 * the emulator's 30 s load timeout on a busy 2-core machine): four sign-ups at once, delivered, before the
 * cases, so that what the cases time is the delivery's own waits, not the emulator's cold starts.
 */
beforeAll(async () => {
  const ids = await Promise.all([1, 2, 3, 4].map((n) => signUp(`warm-up-${n}@example.org`)));
  // A hook has no expect.poll: the same poll, by hand.
  const deadline = Date.now() + 120_000;
  let states: (string | undefined)[] = [];
  while (Date.now() < deadline) {
    states = (await Promise.all(ids.map(parts))).flatMap((row) => [row.contact.state, row.thank_you.state]);
    if (states.every((state) => state === 'done')) return;
    await delay(500);
  }
  throw new Error(`the warm-up sign-ups were not delivered: ${states.join(', ')}`);
}, 130_000);

/**
 * Cases 1 and 2: a fault of our setup's on `part` while `people` sign up, for FAULT_MS, then fixed. Meanwhile
 * each row says why the part waits (`configuration`, with the code) and is retried on Cloud Tasks' backoff; after
 * the fix each is delivered once, within the backoff in force (RETRIED_AFTER_FIX_MS). `queued` opens once the
 * rows' tasks have all run (both parts tried), `fixed` once the fault is lifted, whatever the case came to.
 */
async function refusedThenFixed(
  expect: ExpectStatic,
  fault: {
    label: string;
    people: readonly string[];
    part: 'contact' | 'thank_you';
    lastError: RegExp;
    start: () => Promise<unknown>;
    fix: () => Promise<unknown>;
    /** How many times the address was delivered (mails to it, contacts of it in MailerLite). */
    delivered: (email: string) => Promise<number>;
    queued: Gate;
    fixed: Gate;
  },
): Promise<void> {
  const { people, part } = fault;
  const other = part === 'contact' ? 'thank_you' : 'contact';
  const partsOf = async (ids: readonly string[]) => Promise.all(ids.map(parts));
  let faultStarted = 0;
  let fixedAt = 0;
  try {
    await fault.start();
    faultStarted = Date.now();
    const ids = await Promise.all(people.map(signUp));
    // The row says why the part waits, with the code; nothing is ended for our setup's refusal. The other part
    // was tried too (its service may be refused meanwhile by the other case).
    await expect
      .poll(async () => (await partsOf(ids)).map((row) => [row[part], (row[other].attempts ?? 0) >= 1]), {
        timeout: FAULT_MS,
        interval: 250,
      })
      .toEqual(
        people.map(() => [
          expect.objectContaining({
            state: 'pending',
            reason: 'configuration',
            last_error: expect.stringMatching(fault.lastError),
          }),
          true,
        ]),
      );
    fault.queued.open();
    // The fault lasts its minute: the tasks come back on their backoff (the first 10 s after the first
    // attempt), and are refused again.
    await expect
      .poll(async () => (await partsOf(ids)).map((row) => row[part]), { timeout: FAULT_MS, interval: 500 })
      .toEqual(
        people.map(() =>
          expect.objectContaining({
            state: 'pending',
            reason: 'configuration',
            attempts: expect.toSatisfy((n: number) => n >= 2),
          }),
        ),
      );
    await delay(Math.max(0, faultStarted + FAULT_MS - Date.now()));
    for (const email of people) expect(await fault.delivered(email)).toBe(0);

    await fault.fix();
    fixedAt = Date.now();
    fault.fixed.open();
    const bound = RETRIED_AFTER_FIX_MS + DELIVERY_MS;
    const seen = await firstSeen(people, fault.delivered, fixedAt, bound);
    console.log(
      `${fault.label} fixed after ${seconds(fixedAt - faultStarted)} -> delivered ${figures(people, seen)} after the fix`,
    );
    expect([...seen.keys()].sort()).toEqual([...people].sort());
    for (const ms of seen.values()) expect(ms).toBeLessThanOrEqual(bound);
    // Each part done (saved once delivered, a moment after), and each delivered exactly once.
    await expect
      .poll(async () => (await partsOf(ids)).map((row) => row[part].state), {
        timeout: 10_000,
        interval: 250,
      })
      .toEqual(people.map(() => 'done'));
    for (const email of people) expect(await fault.delivered(email)).toBe(1);
  } finally {
    fault.queued.open();
    if (!fixedAt) await fault.fix();
    fault.fixed.open();
  }
}

describe.concurrent('on production settings, only the person ends a part (npm run emulators)', () => {
  it(
    'the relay refusing our sender (554 5.7.1 at MAIL FROM) for a minute while three people sign up: each thank-you waits, saying so on the row, and each is thanked exactly once soon after the fix',
    ({ expect }) =>
      refusedThenFixed(expect, {
        label: 'relay',
        people: ['sender-a@example.org', 'sender-b@example.org', 'sender-c@example.org'],
        part: 'thank_you',
        lastError: /\b554\b/,
        // As a provider refuses a sender whose domain it has not verified yet: every time, until it is.
        start: () =>
          faults(stack.ports.GOODY_SMTP_API_PORT, {
            refuse: {
              stage: 'mail',
              code: 554,
              message: '5.7.1 Message rejected: Email address is not verified',
            },
          }),
        fix: () => faults(stack.ports.GOODY_SMTP_API_PORT, { refuse: [] }),
        delivered: mailsTo,
        queued: relaySignupsQueued,
        fixed: relayFixed,
      }),
    // The rows' first attempts, the fault's minute, the bound after it, and the parts' last writes.
    2 * FAULT_MS + RETRIED_AFTER_FIX_MS + DELIVERY_MS + 20_000,
  );

  it(
    'MailerLite answering 401 to our key for a minute while three people sign up: each contact waits, saying so on the row, and each is in MailerLite exactly once soon after the fix',
    ({ expect }) =>
      refusedThenFixed(expect, {
        label: 'MailerLite key',
        people: ['key-a@example.org', 'key-b@example.org', 'key-c@example.org'],
        part: 'contact',
        lastError: /^mailerlite 401$/,
        // The key revoked, or not the account's: every API request answered 401, until an operator puts it right.
        start: () => faults(stack.ports.GOODY_MAILERLITE_PORT, { refuseKey: true }),
        fix: () => faults(stack.ports.GOODY_MAILERLITE_PORT, { refuseKey: false }),
        delivered: contactsOf,
        queued: keySignupsQueued,
        fixed: keyFixed,
      }),
    2 * FAULT_MS + RETRIED_AFTER_FIX_MS + DELIVERY_MS + 20_000,
  );

  it(
    'Cloud Tasks refusing enqueues for a minute after the trigger committed: each sign-up made meanwhile is contacted and thanked once enqueues are back, re-driven by the reconciler',
    async ({ expect }) => {
      // Only once the other cases' sign-ups have their tasks: this fault refuses every enqueue on the stack.
      await Promise.all([relaySignupsQueued.opened, keySignupsQueued.opened]);
      const people = ['lost-enqueue-a@example.org', 'lost-enqueue-b@example.org'];
      const tasks = stack.ports.GOODY_TASKS_PORT;
      let faultStarted = 0;
      let fixedAt = 0;
      try {
        await faults(tasks, { refuseEnqueue: true });
        faultStarted = Date.now();
        // One after the other: a trigger that fails ends its worker process in the Functions emulator ("Your
        // function was killed because it raised an unhandled error"), and a trigger handed to that worker as it
        // ends is lost (ECONNRESET; the emulator retries no event). Production's Eventarc would retry it; here
        // the next sign-up waits until the worker is gone.
        const killed = () =>
          stack.run.output().split('Your function was killed because it raised').length - 1;
        const ids: string[] = [];
        for (const email of people) {
          const [before, refusedBefore] = [killed(), Number((await faultsNow(tasks)).refused)];
          const id = await signUp(email);
          ids.push(id);
          // The trigger committed the row's parts (pending on round 0, due CONFIRM_S after the commit), then its
          // two enqueues were refused: firebase-admin sends each five times (a 503 is retried four times, 0.5 s
          // doubling), and the trigger fails with the first to give up (the other's last try may be cut short
          // as its worker ends). No task, so no attempt.
          await expect
            .poll(
              async () => ({
                row: await parts(id),
                refused: Number((await faultsNow(tasks)).refused) - refusedBefore,
                failed: killed() > before,
              }),
              { timeout: FAULT_MS / 2, interval: 250 },
            )
            .toEqual({
              row: {
                indexed: true,
                contact: expect.objectContaining({ state: 'pending', round: 0, attempts: 0 }),
                thank_you: expect.objectContaining({ state: 'pending', round: 0, attempts: 0 }),
              },
              refused: expect.toSatisfy((n: number) => n >= 5),
              failed: true,
            });
        }
        // A minute, and until the relay and MailerLite are fixed (cases 1 and 2), so that what this case
        // measures is the lost enqueue's recovery, not theirs. The reconciler meanwhile finds the parts due
        // (CONFIRM_S after the commit) and is refused too.
        await delay(Math.max(0, faultStarted + FAULT_MS - Date.now()));
        await Promise.all([relayFixed.opened, keyFixed.opened]);
        for (const id of ids) {
          expect(await parts(id)).toMatchObject({
            contact: { state: 'pending', round: 0, attempts: 0 },
            thank_you: { state: 'pending', round: 0, attempts: 0 },
          });
        }

        await faults(tasks, { refuseEnqueue: false });
        fixedAt = Date.now();
        enqueuesBack.open();
        const bound = REDRIVEN_AFTER_FIX_MS + DELIVERY_MS;
        const [thanked, added] = await Promise.all([
          firstSeen(people, mailsTo, fixedAt, bound),
          firstSeen(people, contactsOf, fixedAt, bound),
        ]);
        console.log(
          `enqueues refused for ${seconds(fixedAt - faultStarted)} -> thanked ${figures(people, thanked)}, in MailerLite ${figures(people, added)} after they were back (compressed: due ${CONFIRM_S} s after the commit, reconciled every ${RECONCILE_S} s; production: 4 and 10 minutes)`,
        );
        expect([...thanked.keys()].sort()).toEqual(people);
        expect([...added.keys()].sort()).toEqual(people);
        for (const ms of [...thanked.values(), ...added.values()]) expect(ms).toBeLessThanOrEqual(bound);
        // Delivered by a round the reconciler enqueued (the trigger's round 0 never reached Cloud Tasks).
        await expect
          .poll(
            async () =>
              (await Promise.all(ids.map(parts))).map((row) => [
                row.contact.state,
                row.thank_you.state,
                Math.min(row.contact.round ?? 0, row.thank_you.round ?? 0) >= 1,
              ]),
            { timeout: 10_000, interval: 250 },
          )
          .toEqual(ids.map(() => ['done', 'done', true]));
        for (const email of people) {
          expect(await mailsTo(email)).toBe(1);
          expect(await contactsOf(email)).toBe(1);
        }
        expect(stack.run.output()).toMatch(/"event":"reconcile\.run"/);
      } finally {
        if (!fixedAt) await faults(tasks, { refuseEnqueue: false });
        enqueuesBack.open();
      }
    },
    // After cases 1 and 2 have queued their sign-ups (their first attempts), its minute, and the bound.
    2 * FAULT_MS + REDRIVEN_AFTER_FIX_MS + DELIVERY_MS + 30_000,
  );

  it(
    "a recipient refused with 550 5.1.1 at RCPT gets no mail and no retry, while the others signed up with it are thanked, one of them after the relay's own refusal at RCPT (550 5.7.1) was retried",
    async ({ expect }) => {
      // On a relay that takes our sender and on a Cloud Tasks that takes enqueues (cases 1 and 4).
      await Promise.all([relayFixed.opened, enqueuesBack.opened]);
      const gone = 'no-such-mailbox@example.org';
      const policy = 'relay-policy@example.org';
      const others = ['neighbour-a@example.org', 'neighbour-b@example.org'];
      const smtpApi = stack.ports.GOODY_SMTP_API_PORT;
      // Each once: a retry of the refused recipient would find its rule used up, and its mail would arrive.
      await faults(smtpApi, {
        rejectNext: [
          { stage: 'rcpt', code: 550, message: '5.1.1 Mailbox unavailable', recipient: gone },
          { stage: 'rcpt', code: 550, message: '5.7.1 Relaying denied', recipient: policy },
        ],
      });
      const [goneId, policyId, ...otherIds] = await Promise.all([gone, policy, ...others].map(signUp));
      const signedUp = Date.now();
      // The person's own mailbox refused: the part ends at its first attempt, for the person's reason. (Within
      // a cold start: case 4's failed triggers ended the trigger's warm workers.)
      await expect
        .poll(async () => (await parts(goneId as string)).thank_you, { timeout: 30_000, interval: 250 })
        .toMatchObject({ state: 'skipped', reason: 'refused', attempts: 1 });
      const thanked = await firstSeen(others, mailsTo, signedUp, 30_000);
      expect([...thanked.keys()].sort()).toEqual(others);
      // A refusal at RCPT that is not about the mailbox (5.7.x: the relay's policy) is our setup's: retried after
      // the queue's backoff (10 s), and thanked.
      await expect
        .poll(async () => (await parts(policyId as string)).thank_you, { timeout: 40_000, interval: 250 })
        .toMatchObject({ state: 'done', attempts: 2 });
      expect(await mailsTo(policy)).toBe(1);
      // A retry of the refused recipient would have come after the same backoff as the policy one's: a few
      // seconds more of it for the dispatch loop, then nothing came.
      await delay(Math.max(0, signedUp + 15_000 - Date.now()));
      expect(await mailsTo(gone)).toBe(0);
      expect(await parts(goneId as string)).toMatchObject({
        thank_you: { state: 'skipped', reason: 'refused', attempts: 1 },
      });
      expect(
        ((await faultsNow(smtpApi)).rejectNext as { recipient?: string }[]).filter(
          (rule) => rule.recipient === gone,
        ),
      ).toEqual([]);
      for (const email of others) expect(await mailsTo(email)).toBe(1);
      await expect
        .poll(async () => Promise.all(otherIds.map(async (id) => (await parts(id)).thank_you.state)), {
          timeout: 10_000,
          interval: 250,
        })
        .toEqual(others.map(() => 'done'));
    },
    // After case 4's minute and bound, its own half-minute or so.
    3 * FAULT_MS + REDRIVEN_AFTER_FIX_MS + DELIVERY_MS + 60_000,
  );
});
