// The delivery simulation from the command line (functions/src/delivery/delivery-simulation.test.ts, under vitest,
// which starts the Firestore emulator):
//
//   npm run simulate -- --runs N [--seed S]   N seeds from S (a new S each time when not given)
//   npm run simulate -- --seed S              replays seed S
//
// Prints `N runs, F failed` and each failing seed's one-line replay command; exits non-zero on a failure.
// SIM_PARALLEL sets how many seeds run side by side (4).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const usage = 'usage: npm run simulate -- --runs N [--seed S]  |  npm run simulate -- --seed S\n';
let values: { runs?: string; seed?: string };
try {
  ({ values } = parseArgs({ options: { runs: { type: 'string' }, seed: { type: 'string' } } }));
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n${usage}`);
  process.exit(2);
}
const whole = (raw: string | undefined) => (raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : null);
const runs = values.runs === undefined ? (values.seed === undefined ? null : 1) : whole(values.runs);
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : whole(values.seed);
if (runs === null || runs < 1 || seed === null || seed >= 2 ** 31) {
  process.stderr.write(usage);
  process.exit(2);
}

const folder = mkdtempSync(join(tmpdir(), 'goody-simulate-'));
const report = join(folder, 'report.json');
const root = join(import.meta.dirname, '..', '..');
const started = Date.now();
const vitest = spawnSync(
  'npx',
  [
    'vitest',
    'run',
    '--project',
    'functions',
    'src/delivery/delivery-simulation.test.ts',
    '-t',
    'holds every invariant',
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      SIM_RUNS: String(runs),
      SIM_SEED: String(seed),
      SIM_SECONDS: '0',
      SIM_REPORT: report,
    },
  },
);
let result: { runs: number; failed: Array<{ seed: number; replay: string; findings: string }> };
try {
  result = JSON.parse(readFileSync(report, 'utf8'));
} catch {
  process.stderr.write(`The simulation did not run to its report (vitest exited ${vitest.status}).\n`);
  process.exit(1);
} finally {
  rmSync(folder, { recursive: true, force: true });
}
for (const { seed: failing, findings, replay } of result.failed)
  process.stdout.write(`seed ${failing}: ${findings}\n  ${replay}\n`);
process.stdout.write(
  `${result.runs} runs, ${result.failed.length} failed (${Math.round((Date.now() - started) / 1000)} s)\n`,
);
process.exit(result.failed.length > 0 || vitest.status !== 0 ? 1 : 0);
