// Waits for a freshly launched Chromium to finish starting up before a measurement begins. Headless
// Chromium spends seconds of CPU right after launch (the browser process, its zygotes, the omnibox popup's
// WebUI renderer: about 5.5 s of CPU in its first 6 s on a 2-core machine). Playwright's launch adds its own
// --disable-features list, and Chromium keeps only the last such switch, so the Playwright-driven benches
// cannot turn that WebUI off the way the Lighthouse runs do (tests/e2e/chromium.ts, QUIET_DISABLED_FEATURES);
// they wait for it instead. Linux only (/proc); elsewhere a fixed pause.
import { readFileSync } from 'node:fs';
import { commandLineOf, descendantsOf } from '../../dev/process-table.ts';

const CLOCK_TICKS_PER_S = 100;

/** User plus system CPU time of one process, in clock ticks (0 once it has ended). */
function cpuTicksOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the parenthesised command name: state is field 0, utime 11 and stime 12.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0; // the process ended meanwhile
  }
}

/** CPU time (ms) used so far by the Chromium processes this Node process started. */
function chromiumCpuMs(): number {
  let ticks = 0;
  for (const { pid } of descendantsOf([process.pid])) {
    if (commandLineOf(pid)?.includes('chromium')) ticks += cpuTicksOf(pid);
  }
  return (ticks * 1000) / CLOCK_TICKS_PER_S;
}

/**
 * Resolves once the Chromium processes this Node process started used less than `share` of one core over
 * `windowMs` (default: under 10 % over 500 ms), or after `maxMs`. Returns how long it waited.
 */
export async function untilChromiumSettles(
  options: { windowMs?: number; share?: number; maxMs?: number } = {},
): Promise<number> {
  const { windowMs = 500, share = 0.1, maxMs = 15_000 } = options;
  const startedAt = Date.now();
  if (process.platform !== 'linux') {
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    return Date.now() - startedAt;
  }
  let before = chromiumCpuMs();
  while (Date.now() - startedAt < maxMs) {
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const now = chromiumCpuMs();
    if (now - before < windowMs * share) break;
    before = now;
  }
  return Date.now() - startedAt;
}
