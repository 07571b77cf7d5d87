// `npm run bench:stranger`: can a stopwatch tell whether an address signed up? Starts `npm start`'s stack on
// free ports, puts four addresses in four states (never seen; stored; stored then erased by the unsubscribe
// link; stored and already thanked), then calls add-contact-to-mailerlite and send-thank-you-email 50 times
// each per state, interleaved, over the callable HTTP protocol, and prints each state's median. The two
// callables only check the body (they read nothing and enqueue nothing), so the target is that the medians of one callable stay within
// 15 ms of one another. Writes bench-results/stranger-<timestamp>.json and stranger-latest.json.
//
//   npm run bench:stranger [-- --calls 50]

import { parseArgs } from 'node:util';
import { CALLABLES } from '@goody/contract';
import { DEV_MAILBOX_KEY_SECRET } from '../../dev/stack.ts';
import { mailboxKey } from '../../functions/src/privacy/mailbox-key.ts';
import { benchOnStack } from './on-stack.ts';
import { writeResults } from './paths.ts';
import { median } from './stats.ts';

const { values: args } = parseArgs({ options: { calls: { type: 'string', default: '50' } } });
const CALLS = Number(args.calls);
if (!Number.isInteger(CALLS) || CALLS < 1) throw new Error('--calls must be a positive integer');
const TARGET_MS = 15;

const OWNER = { authorization: 'Bearer owner', 'content-type': 'application/json' };
const keyOf = (email: string) => mailboxKey(DEV_MAILBOX_KEY_SECRET, email);

await benchOnStack('stranger', {}, async (stack, missed) => {
  const { firestoreUrl, functionsUrl } = stack.info;
  const documents = `${firestoreUrl}/v1/projects/demo-goody/databases/(default)/documents`;
  const put = async (collection: string, id: string, fields: Record<string, unknown>) => {
    const response = await fetch(`${documents}/${collection}?documentId=${encodeURIComponent(id)}`, {
      method: 'POST',
      headers: OWNER,
      body: JSON.stringify({ fields }),
    });
    if (!response.ok)
      throw new Error(`storing ${collection}/${id}: ${response.status} ${await response.text()}`);
  };
  const signup = (email: string) => ({
    email: { stringValue: email },
    subscription_type: { stringValue: 'updates' },
    source: { stringValue: 'hero_form' },
    created_at: { timestampValue: new Date().toISOString() },
  });
  const now = { timestampValue: new Date().toISOString() };

  const STATES = {
    unknown: 'never-seen@example.com',
    stored: 'stored@example.com',
    erased: 'erased@example.com',
    thanked: 'thanked@example.com',
  } as const;
  await put('email_subscriptions', 'stored', signup(STATES.stored));
  await put('email_subscriptions', 'thanked', signup(STATES.thanked));
  await put('thank_you_mails', keyOf(STATES.thanked), { state: { stringValue: 'sent' }, sent_at: now });
  // What the unsubscribe link leaves: no sign-up, the mailbox on the suppression list.
  await put('suppressed_mailboxes', keyOf(STATES.erased), { erased_at: now });

  const call = async (name: string, data: unknown): Promise<number> => {
    const started = performance.now();
    const response = await fetch(`${functionsUrl}/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data }),
    });
    const body = await response.text();
    const ms = performance.now() - started;
    if (body !== '{"result":{"status":"accepted"}}')
      throw new Error(`${name} answered ${response.status} ${body}`);
    return ms;
  };
  const bodies = {
    [CALLABLES.addContact]: (email: string) => ({ email, source: 'hero_form' }),
    [CALLABLES.sendThankYou]: (email: string) => ({ email }),
  };

  // Warm both workers first: a cold start is the same for everyone, and not what this measures.
  for (const [name, body] of Object.entries(bodies)) await call(name, body('warm-up@example.com'));

  const samples = new Map<string, Map<string, number[]>>();
  for (const name of Object.keys(bodies)) {
    samples.set(name, new Map(Object.keys(STATES).map((state) => [state, [] as number[]])));
  }
  for (let round = 0; round < CALLS; round++) {
    for (const [name, body] of Object.entries(bodies)) {
      for (const [state, email] of Object.entries(STATES)) {
        samples
          .get(name)
          ?.get(state)
          ?.push(await call(name, body(email)));
      }
    }
  }

  const figures: Record<string, { medians: Record<string, number>; spreadMs: number }> = {};
  console.log(`\n${CALLS} calls per state, interleaved, against npm start's stack (ms, median):`);
  for (const [name, byState] of samples) {
    const medians = Object.fromEntries([...byState].map(([state, values]) => [state, median(values)]));
    const values = Object.values(medians);
    const spreadMs = Math.max(...values) - Math.min(...values);
    figures[name] = { medians, spreadMs };
    console.log(
      `  ${name.padEnd(26)} ${Object.entries(medians)
        .map(([state, ms]) => `${state} ${ms.toFixed(1)}`)
        .join(
          ', ',
        )}; spread ${spreadMs.toFixed(1)} (target <= ${TARGET_MS}: ${spreadMs <= TARGET_MS ? 'met' : 'MISSED'})`,
    );
    if (spreadMs > TARGET_MS) missed();
  }
  writeResults('stranger', { date: new Date().toISOString(), calls: CALLS, targetMs: TARGET_MS, figures });
});
