// The delivery engine explored by seeds (functions/test-support/simulation/: the scenario a seed plays, the world
// of doubles, the invariants, the run). Each seed is one run of 20 to 200 sign-ups through the production
// handlers on the Firestore emulator; `npm run simulate -- --runs N [--seed S]` runs more, and replays one.
//
// Here SIM_RUNS seeds (25) from SIM_SEED, or the seeds SIM_SEEDS lists, SIM_PARALLEL (4) side by side, for
// SIM_SECONDS at most (40; 0: no limit) but the first, which runs to its end: a run still going then is left and
// not counted, so a machine under load runs fewer seeds, and says so. SIM_SEED is BASE_SEED unless set, so
// `npm test` explores the same seeds on every run (BASE_SEED and the 24 after it, or the first of them under
// load) and fails only on a change; `npm run simulate` sets a new SIM_SEED each time, and so explores new ones.
// SIM_VERBOSE prints each run's size and time.
//
// A replay is exact: every choice of a run (its scenario, the interleaving, the faults) is drawn from its seed.
//
// Found on the code before issue 43 (commit d7ce647), each replayed there with `npm run simulate -- --seed S`:
// FOUND_BEFORE_ISSUE_43 below; found while exploring since: FOUND_EXPLORING. The last test replays every seed
// named here, which must now pass.

import '../../test-support/simulation/settings';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FirestoreHarness, startFirestore } from '../../test-support/firestore';
import { MAILBOX_SECRET } from '../../test-support/signups';
import { type Finding, Invariants } from '../../test-support/simulation/invariants';
import { simulate } from '../../test-support/simulation/run';
import { scenarioOf } from '../../test-support/simulation/scenario';
import { SIGNUPS, THANK_YOU_MAILS } from '../contract';
import { mailboxKey } from '../privacy/mailbox-key';
import { THANK_YOU_LEASE_MS } from './deliver-thank-you';

/**
 * The first seed `npm test` runs. It once failed the check 31 minutes after the faults' end, which misread a
 * +tag row's `already_thanked` (invariants.ts, settled), so the seeds explored on every run begin with it.
 */
const BASE_SEED = 566782885;

/** Seeds named in the code, and what each found on the code before issue 43. */
const FOUND_BEFORE_ISSUE_43: Record<number, string> = {
  // 20 sign-ups of 13 people, 4 mails an hour, the relay refusing our login for 2.4 hours from the start: the
  // thank-yous released with a slot through the outage leave together after the fix, 5 (or 6) in the hour from
  // 120 minutes; and a thank-you waiting its turn has neither a task nor a due time for over 15 minutes.
  373: 'hour_budget, net',
  // 20 sign-ups of 9 people, 4 mails an hour, two of them unsubscribing, the relay unreachable for 25 minutes and
  // Cloud Tasks for 2 hours: a thank-you waiting its turn has neither a task nor a due time for over 15 minutes.
  618: 'net',
};

/** Seeds that found a bug of issue 43's engine while it was explored, each fixed since (the commit names it). */
const FOUND_EXPLORING: Record<number, string> = {
  // 24 sign-ups, 4 mails an hour, the relay losing its replies after DATA: a bare spelling's mail left unseen,
  // a retry gave its slot back unsent, and a +tag spelling's claim then sent a second message on that one slot,
  // 5 thank-yous in hour 0 (deliver-thank-you.ts, slotTried).
  567000018: 'hour_budget',
  // A thank-you over the budget booked a later hour, and the database refused both the record's give-back of
  // that slot and the part's `waits`: its next round was enqueued for a slot no record held, and the part said
  // "pending, database" for two hours, past the check 31 minutes after the faults' end (deliver-thank-you.ts:
  // the slot is kept on the record before its round is enqueued).
  567100918: 'settled',
};

const PARALLEL = Number(process.env.SIM_PARALLEL ?? 4);
const projects: FirestoreHarness[] = [];
beforeAll(async () => {
  // Seeds run side by side, each in a Firestore project of its own: the emulator answers them in parallel.
  for (let index = 0; index < PARALLEL; index += 1) projects.push(await startFirestore());
});
afterAll(() => Promise.all(projects.map((each) => each.stop())));

const replay = (seed: number) => `npm run simulate -- --seed ${seed}`;
const describeFindings = (findings: Finding[]) =>
  findings
    .map(
      (each) =>
        `${each.invariant}${each.at === null ? '' : ` at ${Math.round(each.at / 60_000)} min`}: ${each.message}`,
    )
    .join('; ');

interface Exploration {
  runs: number;
  failed: Array<{ seed: number; replay: string; findings: string }>;
}

async function explore(seeds: number[], seconds: number): Promise<Exploration> {
  const failed: Exploration['failed'] = [];
  const started = performance.now();
  const queue = [...seeds];
  let runs = 0;
  let rows = 0;
  const worker = async (firestore: FirestoreHarness) => {
    for (let seed = queue.shift(); seed !== undefined; seed = queue.shift()) {
      // The first seed runs to its end whatever the time: a lane that ran none would prove nothing.
      const deadline = seconds > 0 && seed !== seeds[0] ? started + seconds * 1000 : undefined;
      let result: Awaited<ReturnType<typeof simulate>>;
      try {
        result = await simulate(scenarioOf(seed), firestore, deadline);
      } catch (error) {
        // The run threw (an invocation stuck outside the scheduler, say): its seed fails, named like any
        // other, and its project is used no more (what is left of the run may still write there).
        const findings = `run: the run threw: ${(error as Error).message}`;
        failed.push({ seed, replay: replay(seed), findings });
        console.info(`seed ${seed} failed: ${findings}\n  replay: ${replay(seed)}`);
        return;
      }
      if (result === null) return;
      runs += 1;
      rows += result.rows;
      if (process.env.SIM_VERBOSE)
        console.info(
          `seed ${seed}: ${result.rows} rows, ${result.mails} mails, ${result.ms} ms, ${Math.round(result.simulatedMs / 60_000)} simulated minutes`,
        );
      if (result.findings.length === 0) continue;
      const findings = describeFindings(result.findings);
      failed.push({ seed, replay: replay(seed), findings });
      console.info(`seed ${seed} failed: ${findings}\n  replay: ${replay(seed)}`);
    }
  };
  await Promise.all(projects.map(worker));
  const ms = Math.round(performance.now() - started);
  console.info(
    `${runs} runs, ${failed.length} failed (${rows} rows, ${ms} ms, ${Math.round(ms / Math.max(runs, 1))} ms a run${runs < seeds.length ? `; ${seeds.length} asked, the rest left at SIM_SECONDS` : ''})`,
  );
  return { runs, failed };
}

describe('the delivery engine explored by seeds', () => {
  it('holds every invariant in every seed', async () => {
    const runs = Number(process.env.SIM_RUNS ?? 25);
    const first = Number(process.env.SIM_SEED ?? BASE_SEED);
    const seeds = process.env.SIM_SEEDS
      ? process.env.SIM_SEEDS.split(',').map(Number)
      : Array.from({ length: runs }, (_, index) => (first + index) % 2 ** 31);
    if (!process.env.SIM_SEEDS) console.info(`delivery simulation: seeds ${first} to ${first + runs - 1}`);
    const exploration = await explore(seeds, Number(process.env.SIM_SECONDS ?? 40));
    if (process.env.SIM_REPORT) writeFileSync(process.env.SIM_REPORT, JSON.stringify(exploration));
    expect(exploration.failed.map(({ replay }) => replay)).toEqual([]);
    expect(exploration.runs).toBeGreaterThan(0);
  }, 3_600_000);

  it('replays every seed named in the code', async () => {
    const named = [...Object.keys(FOUND_BEFORE_ISSUE_43), ...Object.keys(FOUND_EXPLORING)].map(Number);
    const exploration = await explore(named, 0);
    expect(exploration.runs).toBe(named.length);
    expect(exploration.failed.map(({ replay }) => replay)).toEqual([]);
  }, 600_000);
});

describe("the invariants' reading of a settled thank-you", () => {
  // A +tag spelling stored before the faults' end waits its turn in the mail budget; another +tag spelling of
  // the mailbox, stored after, takes the claim and sends on the mailbox's slot: the first ends `already_thanked`,
  // the person's reason, though the row thanked is one the check of rows stored by then does not look at.
  const storedBy = Date.UTC(2026, 10, 27, 12, 0, 0);
  const thankYou = (state: 'done' | 'skipped', reason?: string) => ({
    state,
    round: 1,
    attempts: 2,
    updated_at: new Date(storedBy),
    ...(reason ? { reason } : {}),
  });
  const contact = thankYou('done');
  const findingsOf = async (
    rows: Array<{ email: string; at: number; thank_you: object }>,
    records: Record<string, object> = {},
  ) => {
    const [firestore] = projects as [FirestoreHarness];
    await firestore.reset();
    for (const [email, record] of Object.entries(records))
      await firestore.db.collection(THANK_YOU_MAILS).doc(mailboxKey(MAILBOX_SECRET, email)).set(record);
    for (const row of rows)
      await firestore.db.collection(SIGNUPS).add({
        email: row.email,
        created_at: new Date(row.at),
        delivery: { contact, thank_you: row.thank_you },
      });
    const invariants = new Invariants({ ...scenarioOf(1), refused: -1, erasures: [] }, (email) =>
      mailboxKey(MAILBOX_SECRET, email),
    );
    await invariants.settled(firestore.db, new Map(), 'by then', storedBy, storedBy);
    return invariants.findings.map((each) => each.message);
  };

  it('takes `already_thanked` as the reason when a row of the mailbox stored later was thanked', async () => {
    expect(
      await findingsOf([
        {
          email: 'kid7+goody@mail.example',
          at: storedBy - 60_000,
          thank_you: thankYou('skipped', 'already_thanked'),
        },
        { email: 'kid7+news@mail.example', at: storedBy + 60_000, thank_you: thankYou('done') },
      ]),
    ).toEqual([]);
  });

  it("takes a thank-you behind its mailbox's mail claimed less than a lease before as waiting its turn, and not one behind an older claim", async () => {
    // A budget hour's release: one row's task claims the mailbox and sends; its other rows' tasks, there at the
    // same moment, find the claim held and retry seconds later, to end `already_thanked`.
    const behind = (claimedAgo: number) =>
      findingsOf(
        [
          {
            email: 'kid9+goody@mail.example',
            at: storedBy - 60_000,
            thank_you: { ...thankYou('done'), state: 'pending', last_error: 'in_progress' },
          },
        ],
        { 'kid9@mail.example': { state: 'sent', claimed_at: new Date(storedBy - claimedAgo) } },
      );
    expect(await behind(10_000)).toEqual([]);
    expect(await behind(THANK_YOU_LEASE_MS + 60_000)).toEqual([
      'a thank_you still pending (no reason, in_progress) by then',
    ]);
  });

  it('finds `already_thanked` beside no row of the mailbox thanked', async () => {
    expect(
      await findingsOf([
        {
          email: 'kid7+goody@mail.example',
          at: storedBy - 60_000,
          thank_you: thankYou('skipped', 'already_thanked'),
        },
        { email: 'kid8@mail.example', at: storedBy + 60_000, thank_you: thankYou('done') },
      ]),
    ).toEqual(["a thank_you skipped for already_thanked, not the person's reason"]);
  });
});
