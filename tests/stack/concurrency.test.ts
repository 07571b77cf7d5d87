// The local stack under concurrency, as Cloud Functions holds it: every request answered, a bounded number of
// worker processes per function (the launcher's pool, dev/launcher/functions-emulator-pool.cjs), and a rush of
// sign-ups from many clients at once each contacted and thanked once. One fresh stack for the file (`npm run
// emulators -- --fresh`: `npm start -- --fresh` without the build, which npm test's build step made), on the
// production settings: MailerLite's pace, the mail budget, the retries.

import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { CALLABLES } from '@goody/contract';
import { describe, expect, it } from 'vitest';
import { listProcesses } from '../../dev/process-table.ts';
import { STACK_RUN_MARK } from './launcher-process.ts';
import { pageDocumentId, storeSignupAsThePage } from './page-writes.ts';
import { sharedStack } from './shared-stack.ts';

/** The launcher's default pool: worker processes one function may run at once (GOODY_FUNCTIONS_WORKERS). */
const WORKERS_PER_FUNCTION = 4;

const stack = sharedStack({
  logName: 'concurrency-stack.log',
  args: ['run', 'emulators', '--', '--fresh'],
});

const local = (port: number) => `http://127.0.0.1:${port}`;

/** The environment a process was started with, or undefined once it is gone. */
function environOf(pid: number): Map<string, string> | undefined {
  try {
    const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
    return new Map(
      entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
    );
  } catch {
    return undefined;
  }
}

/** The stack's function worker processes running now, by the function each serves (K_SERVICE). */
function workersByFunction(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const entry of listProcesses()) {
    if (entry.state === 'Z') continue;
    const env = environOf(entry.pid);
    if (env?.get(STACK_RUN_MARK) !== stack.run.mark) continue;
    const service = env.get('K_SERVICE');
    if (!service || !env.has('FUNCTION_TARGET')) continue;
    counts.set(service, (counts.get(service) ?? 0) + 1);
  }
  return counts;
}

/** A callable's POST; resolves with its status, or 0 when no answer came within `ms`. */
async function call(url: string, data: unknown, ms = 120_000): Promise<number> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data }),
      signal: AbortSignal.timeout(ms),
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

describe('the local stack under concurrency (npm run emulators -- --fresh)', () => {
  // First, while no worker of the callable exists: the burst meets a cold function, as a launch-day rush would.
  it(`answers a burst of 50 concurrent calls to one cold callable with at most ${WORKERS_PER_FUNCTION} worker processes for it`, async () => {
    const url = `${local(stack.ports.GOODY_FUNCTIONS_PORT)}/demo-goody/us-central1/${CALLABLES.sendThankYou}`;
    expect(workersByFunction().get(CALLABLES.sendThankYou) ?? 0).toBe(0);
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        most = Math.max(most, workersByFunction().get(CALLABLES.sendThankYou) ?? 0);
        await delay(100);
      }
    })();
    const statuses = await Promise.all(
      Array.from({ length: 50 }, (_, n) => call(url, { email: `burst-${n}@example.net` })),
    );
    sampling = false;
    await sampler;
    most = Math.max(most, workersByFunction().get(CALLABLES.sendThankYou) ?? 0);
    expect(statuses.filter((status) => status === 200)).toHaveLength(50);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(WORKERS_PER_FUNCTION);
  }, 180_000);

  it('150 sign-ups from 15 clients at once: every call answered, each contacted and thanked once', async () => {
    const clients = 15;
    const perClient = 10;
    // Shared providers, as teens' and parents' addresses mostly are (no domain's share of the mail budget applies).
    const providers = ['gmail.com', 'outlook.com', 'icloud.com'];
    const emailOf = (client: number, n: number) =>
      `rush-${client}-${n}@${providers[(client * perClient + n) % providers.length]}`;
    const site = local(stack.ports.GOODY_HOSTING_PORT);
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        for (let n = 0; n < perClient; n++) {
          const email = emailOf(client, n);
          // What the page does after its connection test: the insert, then both callables on its own origin.
          await storeSignupAsThePage(
            `127.0.0.1:${stack.ports.GOODY_FIRESTORE_PORT}`,
            pageDocumentId(`rush${client}x${n}`),
            email,
          );
          statuses.push(await call(`${site}/api/${CALLABLES.addContact}`, { email, source: 'hero_form' }));
          statuses.push(await call(`${site}/api/${CALLABLES.sendThankYou}`, { email }));
        }
      }),
    );
    expect(statuses).toHaveLength(clients * perClient * 2);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);

    const emails = Array.from({ length: clients }, (_, client) =>
      Array.from({ length: perClient }, (_, n) => emailOf(client, n)),
    )
      .flat()
      .sort();
    const subscribers = async () =>
      (
        (await (await fetch(`${local(stack.ports.GOODY_MAILERLITE_PORT)}/__control/state`)).json()) as {
          subscribers: { email: string }[];
        }
      ).subscribers
        .map((s) => s.email)
        .filter((email) => email.startsWith('rush-'))
        .sort();
    const mails = async () =>
      (
        (await (await fetch(`${local(stack.ports.GOODY_SMTP_API_PORT)}/__control/state`)).json()) as {
          messages: { to: string[] }[];
        }
      ).messages
        .flatMap((message) => message.to)
        .filter((to) => to.startsWith('rush-'))
        .sort();
    // MailerLite's pace (115 contacts a minute) sets how long the contacts take: about 80 s for 150.
    await expect.poll(subscribers, { timeout: 240_000, interval: 1_000 }).toEqual(emails);
    await expect.poll(mails, { timeout: 60_000, interval: 1_000 }).toEqual(emails);
    // Settled: nothing more arrives (a second thank-you or contact would show here).
    await delay(5_000);
    expect(await mails()).toEqual(emails);
    expect(await subscribers()).toEqual(emails);
  }, 420_000);
});
