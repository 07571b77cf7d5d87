// `npm start` (and `npm run emulators`, which passes --no-build): the whole product, offline. `npm run dev` passes
// --dev: the same stack with the page on Vite's dev server and the functions reloaded on save. See dev/launcher/.

import { resolveLauncherConfig, USAGE } from './launcher/config.ts';
import { LauncherError } from './launcher/errors.ts';
import { consoleIO, Launcher } from './launcher/launcher.ts';

// A closed pipe on our output (`npm start | head`) must not crash the launcher and orphan its children.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  consoleIO.out(USAGE);
  process.exit(0);
}

let launcher: Launcher;
try {
  launcher = new Launcher(resolveLauncherConfig(process.argv.slice(2), process.env), consoleIO);
} catch (error) {
  if (!(error instanceof LauncherError)) throw error;
  consoleIO.err(`[launcher] ${error.message}`);
  process.exit(error.exitCode);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => launcher.onSignal(signal));
}
process.on('exit', () => launcher.killEverythingNow());
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(event, (error: unknown) => {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    void launcher.shutdown(1, `[launcher] unexpected failure (${event}): ${text}`);
  });
}

// If whatever started the launcher dies without a signal (npm killed -9, a crashed test runner), the launcher is
// re-parented: nobody can stop it or read its output any more, so it stops everything itself.
const parentAtStart = process.ppid;
const parentWatch = setInterval(() => {
  if (process.ppid === parentAtStart) return;
  clearInterval(parentWatch);
  void launcher.shutdown(
    1,
    `[launcher] the process that started it (pid ${parentAtStart}) is gone; stopping everything.`,
  );
}, 1_000);
parentWatch.unref();

process.exit(await launcher.run());
