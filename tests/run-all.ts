// `npm test`: every layer, in order, and one closing line with the counts. The functions tests, the rules suite
// and the browser suite run on Google's Firebase emulators; without Java 21+ and the emulators on disk the run
// says what to install and fails (dev/emulators/find.ts), it never falls back. Only the browser suite is
// skipped, with its reason printed, where no Chromium is installed.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findGoogleEmulators, GoogleEmulatorsMissing } from '../dev/emulators/find.ts';
import { findChromium } from './e2e/chromium.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const artifacts = path.join(root, 'tests', '.artifacts');

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}
const total: Counts = { passed: 0, failed: 0, skipped: 0 };
const failedSteps: string[] = [];
const skippedLayers: string[] = [];

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.on('error', () => resolve(1));
  });
}

function banner(title: string): void {
  process.stdout.write(`\n=== ${title} ===\n`);
}

/** Each step's wall time, printed in the summary: where CI's time goes. */
const stepSeconds: Array<[string, number]> = [];

async function step(title: string, cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<boolean> {
  banner(title);
  const started = Date.now();
  const code = await run(cmd, args, env);
  stepSeconds.push([title, (Date.now() - started) / 1000]);
  if (code !== 0) failedSteps.push(title);
  return code === 0;
}

/** Runs a Vitest suite with a JSON report beside the console one, and adds its counts to the total. */
async function vitest(
  title: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  const report = path.join(artifacts, `${title.replace(/\W+/g, '-')}.json`);
  rmSync(report, { force: true });
  const argv = [
    'vitest',
    'run',
    ...args,
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
  ];
  const ok = await step(title, 'npx', argv, options.env);
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
  };
  total.passed += json.numPassedTests;
  total.failed += json.numFailedTests;
  total.skipped += json.numPendingTests + json.numTodoTests;
  if (ok && json.numTotalTests === 0) failedSteps.push(`${title} (ran no test)`);
}

mkdirSync(artifacts, { recursive: true });

// Google's emulators first: without them most layers cannot run, and one message says what to install.
banner("Google's Firebase emulators (dev/emulators/find.ts)");
try {
  process.stdout.write(`${findGoogleEmulators().summary}\n`);
} catch (error) {
  if (!(error instanceof GoogleEmulatorsMissing)) throw error;
  process.stdout.write(`${error.message}\n`);
  failedSteps.push("Google's Firebase emulators are not installed (see above)");
}

await step('lint and format (biome ci)', 'npx', ['biome', 'ci', '.']);
await step('type check (every workspace)', 'npm', ['run', 'typecheck', '--workspaces', '--if-present']);
// The web build enforces the bundle budget; the functions build is what the emulator and e2e suite run.
await step('build (web with bundle budget, functions)', 'npm', ['run', 'build']);
// web, functions (on the Firestore emulator), dev, tests/stack (npm start as a child process) and tests/rules
// (the security rules on the Firestore emulator): the root vitest.config.ts lists them.
await vitest('unit, integration and security-rules tests (web, functions, dev, stack, rules)', []);

const chromium = findChromium();
if (chromium) {
  await vitest('end-to-end tests (Chromium)', ['--config', 'tests/e2e/vitest.config.ts'], {
    env: { CHROMIUM_PATH: chromium },
  });
  // Once more with App Check on (its debug provider; the callables enforcing it): the sign-ups through
  // Hosting's rewrites carry a token fetched before the press (tests/e2e/support/app-check.ts).
  await vitest(
    'end-to-end tests with App Check (Chromium, debug provider)',
    ['--config', 'tests/e2e/vitest.config.ts', 'signup.test.ts', 'same-origin-callables.test.ts'],
    { env: { CHROMIUM_PATH: chromium, GOODY_E2E_APP_CHECK: '1' } },
  );
} else {
  skippedLayers.push(
    'e2e tests skipped: no Chromium found (install Debian package chromium, or set CHROMIUM_PATH)',
  );
}

banner('summary');
for (const [title, seconds] of stepSeconds)
  process.stdout.write(`${seconds.toFixed(0).padStart(5)} s  ${title}\n`);
for (const line of skippedLayers) process.stdout.write(`${line}\n`);
for (const title of failedSteps) process.stdout.write(`failed: ${title}\n`);
process.stdout.write(`tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped\n`);
process.exit(failedSteps.length > 0 || total.failed > 0 ? 1 : 0);
