// npm run bench:budget [-- --waiters 100000 --per-hour 500 --windows 4]
//
// The mail budget as a turn (src/mail/turns.ts) under a backlog: N thank-yous waiting in the Firebase Firestore
// emulator, most of them a bot's burst from three catch-all domains (the oldest), the rest people of the shared
// mail providers who signed up after it. Runs the reconciler's release once per budget window, as the deployed
// reconciler's first run in each hour does, and prints per window the thank-you tasks dispatched (released)
// against the budget, each line's share, and the work the run did (entries looked at, document reads). Before the
// turn, every waiting thank-you was dispatched again at every window boundary: that figure is printed beside it.
// Exits non-zero if a window dispatched more than the budget, a domain more than its share, or a line out of
// its order.

import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { deleteApp, initializeApp } from 'firebase-admin/app';
import { getFirestore } from 'firebase-admin/firestore';
import { loopbackOnlyEnv } from '../../stand-ins/loopback-env.ts';
import { startFirestoreEmulator } from '../../tests/support/firestore-emulator.ts';
import type { Logger } from '../src/logs';
import { DOMAIN_SHARE, DOMAIN_SHARE_MIN } from '../src/mail/budget';
import { MAIL_LINES, releaseTurns, SHARED_LINE, WAITING } from '../src/mail/turns';
import { countReads } from '../test-support/reads';

const { values } = parseArgs({
  options: {
    waiters: { type: 'string', default: '100000' },
    'per-hour': { type: 'string', default: '500' },
    windows: { type: 'string', default: '4' },
  },
});
const N = Number(values.waiters);
const perHour = Number(values['per-hour']);
const windows = Number(values.windows);
const share = Math.max(DOMAIN_SHARE_MIN, Math.ceil(perHour * DOMAIN_SHARE));
const HOUR = 60 * 60_000;
const T0 = Date.UTC(2026, 10, 27, 9, 0);

const DOMAINS = ['catch-all-1', 'catch-all-2', 'catch-all-3'];
const quiet: Logger = { info() {}, warn() {}, error() {} };
const fmt = (n: number) => n.toLocaleString('en-US');

async function main(): Promise<void> {
  const firestore = await startFirestoreEmulator();
  process.env.FIRESTORE_EMULATOR_HOST = firestore.hostPort;
  Object.assign(process.env, loopbackOnlyEnv);
  const app = initializeApp({ projectId: 'demo-goody' }, `bench-${randomUUID()}`);
  const db = getFirestore(app);
  let failed = false;
  try {
    // 90% the bots' burst, spread over the three domains, then the people: each line in the order it joined.
    const bots = Math.round(N * 0.9);
    const lines = new Map<string, number>(
      DOMAINS.map((domain) => [domain, Math.round(bots / DOMAINS.length)]),
    );
    lines.set(SHARED_LINE, N - [...lines.values()].reduce((a, b) => a + b, 0));
    process.stdout.write(`Seeding ${fmt(N)} waiting thank-yous in ${lines.size} lines ... `);
    const seeded = Date.now();
    const writer = db.bulkWriter();
    let joined = 0;
    for (const [line, count] of lines) {
      const from = line === SHARED_LINE ? T0 - HOUR : T0 - 2 * HOUR;
      for (let i = 0; i < count; i += 1) {
        joined += 1;
        void writer.create(
          db
            .collection(MAIL_LINES)
            .doc(line)
            .collection(WAITING)
            .doc(`${line}-${String(i).padStart(7, '0')}`),
          { queued_at: new Date(from + i * 10) },
        );
      }
      void writer.set(db.collection(MAIL_LINES).doc(line), { head_at: new Date(from) });
    }
    await writer.close();
    console.info(`${fmt(joined)} in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);
    console.info(
      `Budget ${fmt(perHour)} an hour, a catch-all domain's share ${fmt(share)}; one release run per window.`,
    );
    const next = new Map<string, number>([...lines.keys()].map((line) => [line, 0]));
    let waiting = N;
    const rows: string[] = [];
    const figures: Array<Record<string, unknown>> = [];
    for (let window = 0; window < windows; window += 1) {
      const dispatched = new Map<string, number>();
      let looked = 0;
      let outOfTurn = 0;
      const reads = countReads(db);
      const started = performance.now();
      const report = await releaseTurns({
        db,
        now: T0 + window * HOUR + 5 * 60_000,
        perHour,
        logger: quiet,
        stillWaiting: async () => {
          looked += 1;
          return true;
        },
        release: async (signup) => {
          const line = signup.slice(0, signup.lastIndexOf('-'));
          const place = Number(signup.slice(signup.lastIndexOf('-') + 1));
          dispatched.set(line, (dispatched.get(line) ?? 0) + 1);
          // Oldest first within a line: places are released in order, window after window.
          if (place !== next.get(line)) outOfTurn += 1;
          next.set(line, place + 1);
        },
      });
      const ms = performance.now() - started;
      reads.stop();
      const before = waiting;
      waiting -= report.released;
      const domains = DOMAINS.map((domain) => dispatched.get(domain) ?? 0);
      const over = report.released > perHour || domains.some((count) => count > share);
      if (over || outOfTurn > 0) failed = true;
      rows.push(
        `window ${window + 1}: dispatched ${fmt(report.released)} of budget ${fmt(perHour)} ` +
          `(catch-all domains ${domains.join('/')} of ${share} each, shared ${fmt(dispatched.get(SHARED_LINE) ?? 0)}) · ` +
          `entries looked at ${fmt(looked)} · reads ${fmt(reads.reads)} · ${(ms / 1000).toFixed(1)} s · ` +
          `waiting ${fmt(before)} -> ${fmt(waiting)} · the lottery dispatched ${fmt(before)}` +
          `${over ? '  OVER THE BUDGET' : ''}${outOfTurn ? `  ${outOfTurn} OUT OF TURN` : ''}`,
      );
      console.info(rows[rows.length - 1]);
      figures.push({
        window: window + 1,
        dispatched: report.released,
        budget: perHour,
        catch_all_domains: domains,
        share,
        shared: dispatched.get(SHARED_LINE) ?? 0,
        entries_looked_at: looked,
        reads: reads.reads,
        seconds: Number((ms / 1000).toFixed(1)),
        waiting_before: before,
        lottery_dispatched: before,
        out_of_turn: outOfTurn,
      });
    }
    const results = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench-results');
    mkdirSync(results, { recursive: true });
    const json = JSON.stringify(
      { date: new Date().toISOString(), waiters: N, perHour, share, windows: figures },
      null,
      2,
    );
    writeFileSync(path.join(results, 'budget-latest.json'), `${json}\n`);
    console.info(
      failed
        ? 'FAILED: a window went over the budget or a share, or released out of turn.'
        : `Met: every window dispatched at most the budget (${fmt(perHour)}), each catch-all domain at most its share, each line oldest first; the work per window followed the budget, not the ${fmt(N)} waiting.`,
    );
  } finally {
    await deleteApp(app);
    await firestore.stop();
  }
  if (failed) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
