// `npm test`: every layer this machine can run, in order, and one closing line with the counts.
// Layers that cannot run here (the rules suite without the Firebase Firestore emulator, the browser suite
// without a Chromium) are skipped with a printed reason, never silently.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findChromium } from './e2e/chromium.ts';
import { firestoreEmulatorAvailability } from './rules/detect.ts';

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

async function step(title: string, cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<boolean> {
  banner(title);
  const code = await run(cmd, args, env);
  if (code !== 0) failedSteps.push(title);
  return code === 0;
}

/** Runs a Vitest suite with a JSON report beside the console one, and adds its counts to the total. */
async function vitest(
  title: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; underFirestoreEmulator?: boolean } = {},
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
  const ok = options.underFirestoreEmulator
    ? await step(
        title,
        'npx',
        [
          'firebase',
          'emulators:exec',
          '--only',
          'firestore',
          '--project',
          'demo-goody',
          `npx ${argv.join(' ')}`,
        ],
        options.env,
      )
    : await step(title, 'npx', argv, options.env);
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

/** How many cases a suite has, collected without running them (vitest list), for a layer that cannot run. */
async function countCases(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<number | undefined> {
  const list = path.join(artifacts, `${name}-cases.json`);
  rmSync(list, { force: true });
  const code = await run('npx', ['vitest', 'list', ...args, `--json=${list}`], env);
  if (code !== 0 || !existsSync(list)) return undefined;
  return (JSON.parse(readFileSync(list, 'utf8')) as unknown[]).length;
}

mkdirSync(artifacts, { recursive: true });

await step('lint and format (biome ci)', 'npx', ['biome', 'ci', '.']);
await step('type check (every workspace)', 'npm', ['run', 'typecheck', '--workspaces', '--if-present']);
// The web build enforces the bundle budget; the functions build is what the emulator and e2e suite run.
await step('build (web with bundle budget, functions)', 'npm', ['run', 'build']);
await vitest('unit and integration tests (web, functions, dev, stack)', []);

const rules = firestoreEmulatorAvailability();
if (rules.available) {
  // 'start': firebase-tools starts the emulator around the suite; 'external': one already runs at FIRESTORE_EMULATOR_HOST.
  await vitest(
    'security rules tests (Firebase Firestore emulator)',
    ['--config', 'tests/rules/vitest.config.ts'],
    {
      underFirestoreEmulator: rules.how === 'start',
    },
  );
} else {
  const cases = await countCases('rules', ['--config', 'tests/rules/vitest.config.ts'], {
    // The config refuses to load without an emulator address; collecting the cases never connects to it.
    FIRESTORE_EMULATOR_HOST: '127.0.0.1:9',
  });
  if (cases === undefined) failedSteps.push('counting the rules cases that cannot run here');
  else total.skipped += cases;
  skippedLayers.push(`rules tests skipped (${cases ?? 'uncounted'} cases): ${rules.reason}`);
}

const chromium = findChromium();
if (chromium) {
  await vitest('end-to-end tests (Chromium)', ['--config', 'tests/e2e/vitest.config.ts'], {
    env: { CHROMIUM_PATH: chromium },
  });
} else {
  skippedLayers.push(
    'e2e tests skipped: no Chromium found (install Debian package chromium, or set CHROMIUM_PATH)',
  );
}

banner('summary');
for (const line of skippedLayers) process.stdout.write(`${line}\n`);
for (const title of failedSteps) process.stdout.write(`failed: ${title}\n`);
process.stdout.write(`tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped\n`);
process.exit(failedSteps.length > 0 || total.failed > 0 ? 1 : 0);
