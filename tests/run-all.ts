// `npm test`: every layer, and one closing line with the counts. The functions tests, the rules suite and the
// browser suite run on Google's Firebase emulators; without Java 21+ and the emulators on disk the run says
// what to install and fails (dev/emulators/find.ts), it never falls back. Only the browser suite is skipped,
// with its reason printed, where no Chromium is installed.
//
// Layers that do not depend on each other run at the same time (see the phases below). Each step's output is kept
// whole and printed when it ends (and in tests/.artifacts/<step>.log), so steps never interleave their lines.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findGoogleEmulators, GoogleEmulatorsMissing } from '../dev/emulators/find.ts';
import { commandLineOf, killProcesses, processesMarked } from '../dev/process-table.ts';
import { findChromium } from './e2e/chromium.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const artifacts = path.join(root, 'tests', '.artifacts');
const runStarted = Date.now();

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}
const total: Counts = { passed: 0, failed: 0, skipped: 0 };
const failedSteps: string[] = [];
// Each failing test's file, name and first line of its error, repeated in the summary: a CI log kept only in
// part (its tail) still names what failed.
const failedTests: string[] = [];
const skippedLayers: string[] = [];
const timings: { title: string; seconds: number }[] = [];

// Every process a step starts carries this mark in its environment, down to the emulators' java and the function
// workers (they inherit it), so that whatever outlives its step is found after each phase, named, and fails the run.
const RUN_MARK = 'GOODY_TEST_RUN';
const runMark = randomUUID();

const slug = (title: string) => title.replace(/\W+/g, '-').replace(/^-|-$/g, '');
const seconds = (since: number) => (Date.now() - since) / 1000;
const clock = () => `${seconds(runStarted).toFixed(0).padStart(4)} s`;

/**
 * Runs `cmd args` with its output collected (and written to tests/.artifacts/<step>.log as it comes); prints a
 * line when it starts, and its whole output under a banner when it ends. False when it failed.
 */
function step(title: string, cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<boolean> {
  const started = Date.now();
  process.stdout.write(`[${clock()}] started: ${title}\n`);
  const log = createWriteStream(path.join(artifacts, `${slug(title)}.log`));
  const chunks: Buffer[] = [];
  return new Promise<number>((resolve) => {
    const child = spawn(cmd, args, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env, [RUN_MARK]: runMark },
    });
    const collect = (chunk: Buffer) => {
      chunks.push(chunk);
      log.write(chunk);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.on('error', (error) => {
      collect(Buffer.from(`${error.message}\n`));
      resolve(1);
    });
  }).then((code) => {
    log.end();
    const took = seconds(started);
    timings.push({ title, seconds: took });
    process.stdout.write(`\n=== ${title} (${took.toFixed(0)} s${code === 0 ? '' : `, exit ${code}`}) ===\n`);
    process.stdout.write(Buffer.concat(chunks));
    process.stdout.write(`[${clock()}] finished: ${title}\n`);
    if (code !== 0) failedSteps.push(title);
    return code === 0;
  });
}

// Each step that starts stacks hands out their ports from a block of its own (tests/stack/launcher-process.ts,
// freePorts), so stacks started at the same moment in two lanes never pick the same port.
let portBlock = 20_000;
const PORT_BLOCK_SIZE = 2_000;

/** Runs a Vitest suite with a JSON report beside the console one, and adds its counts to the total. */
async function vitest(title: string, args: string[], env?: NodeJS.ProcessEnv): Promise<void> {
  const ports = { GOODY_TEST_PORT_BASE: String(portBlock) };
  portBlock += PORT_BLOCK_SIZE;
  const report = path.join(artifacts, `${slug(title)}.json`);
  rmSync(report, { force: true });
  const argv = [
    'vitest',
    'run',
    ...args,
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
  ];
  const ok = await step(title, 'npx', argv, { ...ports, ...env });
  if (!existsSync(report)) {
    if (ok) failedSteps.push(`${title} (no report written)`);
    return;
  }
  const json = JSON.parse(readFileSync(report, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
    numTotalTests: number;
    testResults: {
      name: string;
      assertionResults: { status: string; fullName: string; failureMessages: string[] }[];
    }[];
  };
  for (const file of json.testResults)
    for (const test of file.assertionResults.filter((t) => t.status === 'failed')) {
      const first = (test.failureMessages[0] ?? '').split('\n')[0]?.slice(0, 300);
      failedTests.push(`${path.relative(root, file.name)} > ${test.fullName}\n    ${first}`);
    }
  total.passed += json.numPassedTests;
  total.failed += json.numFailedTests;
  total.skipped += json.numPendingTests + json.numTodoTests;
  if (ok && json.numTotalTests === 0) failedSteps.push(`${title} (ran no test)`);
}

/**
 * After a phase, when every step of it has exited: any process still carrying the run's mark was left behind by
 * one (a stack's emulator, a function worker, a browser). What is still on its way out (a daemon such as
 * Chromium's crash handler ends a moment after its browser) gets a few seconds; whatever is left then is named,
 * killed, and fails the run.
 */
async function noProcessLeftAfter(phase: string): Promise<void> {
  let left = processesMarked(RUN_MARK, runMark);
  for (let waited = 0; left.length > 0 && waited < LEFTOVER_GRACE_MS; waited += 250) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    left = processesMarked(RUN_MARK, runMark);
  }
  if (left.length === 0) return;
  process.stdout.write(`\n=== processes left running after ${phase} (killed now) ===\n`);
  for (const entry of left) {
    process.stdout.write(`  pid ${entry.pid} (parent ${entry.ppid}): ${commandLineOf(entry.pid) ?? '?'}\n`);
  }
  killProcesses(left);
  failedSteps.push(`${left.length} process(es) left running after ${phase} (listed above)`);
}
const LEFTOVER_GRACE_MS = 10_000;

mkdirSync(artifacts, { recursive: true });

// Google's emulators first: without them most layers cannot run, and one message says what to install.
process.stdout.write("=== Google's Firebase emulators (dev/emulators/find.ts) ===\n");
try {
  process.stdout.write(`${findGoogleEmulators().summary}\n`);
} catch (error) {
  if (!(error instanceof GoogleEmulatorsMissing)) throw error;
  process.stdout.write(`${error.message}\n`);
  failedSteps.push("Google's Firebase emulators are not installed (see above)");
}

const chromium = findChromium();

/** The browser suite, once as is and once with App Check on: one stack each, so one after the other. */
async function browserSuites(): Promise<void> {
  if (!chromium) {
    skippedLayers.push(
      'e2e tests skipped: no Chromium found (install Debian package chromium, or set CHROMIUM_PATH)',
    );
    return;
  }
  await vitest('end-to-end tests (Chromium)', ['--config', 'tests/e2e/vitest.config.ts'], {
    CHROMIUM_PATH: chromium,
  });
  // Once more with App Check on (its debug provider; the callables enforcing it): the sign-ups through
  // Hosting's rewrites carry a token fetched before the press (tests/e2e/support/app-check.ts).
  await vitest(
    'end-to-end tests with App Check (Chromium, debug provider)',
    ['--config', 'tests/e2e/vitest.config.ts', 'signup.test.ts', 'same-origin-callables.test.ts'],
    { CHROMIUM_PATH: chromium, GOODY_E2E_APP_CHECK: '1' },
  );
}

// In four phases: the lint and the type check beside the build; the unit, functions, stand-ins, dev, ops and rules tests
// alone, their files two at a time (vitest gives a 2-core machine one worker), with nothing else to starve
// their timing cases; then the stack tests (npm start and npm run dev as child processes, one file at a time;
// the delivery's files in a lane of their own) beside the browser suite (its two runs one after the other), each
// waiting on emulators, queues and browsers more than computing. The browser suite's stack runs in a copy of the repository
// (tests/e2e/global-setup.ts), so no stack's build rewrites the functions another stack's emulator loads.
await Promise.all([
  step('lint and format (biome ci)', 'npx', ['biome', 'ci', '.']),
  // The web build enforces the bundle budget; the functions build is what the emulators run. The stack and
  // browser suites build for their own stacks too, but web/dist and functions/lib come from here.
  step('build (web with bundle budget, functions)', 'npm', ['run', 'build']),
  // Every workspace's type check (TypeScript 7, the native compiler: the whole check takes seconds).
  step('type check (every workspace)', 'npm', ['run', 'typecheck']),
]);
await noProcessLeftAfter('the lint, type check and build');
// The root vitest.config.ts lists the projects: web, functions, stand-ins, dev, ops and tests/rules (the security rules on the
// Firestore emulator) here, tests/stack below.
await vitest('unit, integration and security-rules tests (web, functions, stand-ins, dev, ops, rules)', [
  '--project',
  '!stack',
  '--maxWorkers',
  '2',
]);
await noProcessLeftAfter('the unit, integration and security-rules tests');
// The two stack files that time requests (a press's round trips, Chromium's start-up) run alone first: beside
// the browser suite one of them lost its POST under load (CI, 2026-11-26).
const TIMED_STACK_FILES = ['request-path.test.ts', 'bench-chromium.test.ts'];
await vitest('stack tests that time requests (alone)', ['--project', 'stack', ...TIMED_STACK_FILES]);
await noProcessLeftAfter('the stack tests that time requests');
// The stack files that drive the delivery (the queues' pace, the reconciler's schedule, a rush of sign-ups)
// mostly wait on MailerLite's pace and the schedules: a lane of their own beside the other stack files and the
// browser suite.
const DELIVERY_STACK_FILES = ['delivery.test.ts', 'concurrency.test.ts'];
// The delivery on production settings (the workers' retries as deployed, faults of a minute each) spends its
// few minutes waiting out Cloud Tasks' backoff, and a person's own address after a stranger's +tag (a minute):
// a lane of their own, so they add no minute to the other lanes' and cost little CPU beside them.
const PRODUCTION_SETTINGS_STACK_FILES = ['production-settings.test.ts', 'own-address.test.ts'];
// The mail budget through a relay outage (the hour compressed to 12 s, a dozen windows) waits out its windows:
// a lane of its own, nearly idle beside the others.
const BUDGET_STACK_FILES = ['budget-outage.test.ts'];
await Promise.all([
  vitest('stack tests (npm start, npm run dev and the hosting config, as run)', [
    '--project',
    'stack',
    ...[
      ...TIMED_STACK_FILES,
      ...DELIVERY_STACK_FILES,
      ...PRODUCTION_SETTINGS_STACK_FILES,
      ...BUDGET_STACK_FILES,
    ].flatMap((file) => ['--exclude', `**/${file}`]),
  ]),
  vitest('stack tests of the delivery (the queues, the reconciler, a rush of sign-ups)', [
    '--project',
    'stack',
    ...DELIVERY_STACK_FILES,
  ]),
  vitest("stack tests of the delivery on production settings and of a person's own address", [
    '--project',
    'stack',
    ...PRODUCTION_SETTINGS_STACK_FILES,
  ]),
  vitest('stack tests of the mail budget through a relay outage', [
    '--project',
    'stack',
    ...BUDGET_STACK_FILES,
  ]),
  browserSuites(),
]);
await noProcessLeftAfter('the stack tests and the browser suite');

process.stdout.write('\n=== summary ===\n');
for (const { title, seconds: took } of timings)
  process.stdout.write(`${took.toFixed(0).padStart(5)} s  ${title}\n`);
process.stdout.write(`${seconds(runStarted).toFixed(0).padStart(5)} s  in all\n`);
for (const line of skippedLayers) process.stdout.write(`${line}\n`);
for (const title of failedSteps) process.stdout.write(`failed: ${title}\n`);
for (const test of failedTests) process.stdout.write(`failed test: ${test}\n`);
process.stdout.write(`tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped\n`);
process.exit(failedSteps.length > 0 || total.failed > 0 ? 1 : 0);
