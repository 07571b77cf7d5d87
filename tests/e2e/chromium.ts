import { existsSync } from 'node:fs';

/** The Chromium the browser suites drive: $CHROMIUM_PATH, else Debian's package. Undefined when there is none. */
export function findChromium(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((candidate): candidate is string => Boolean(candidate && existsSync(candidate)));
}

/** Flags for a headless Chromium on a machine with no network beyond loopback (see README, "Browser tests"). */
export const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Chromium features a measurement turns off: in headless Chromium 156 the browser builds the omnibox's popup
 * as a WebUI page at startup, a renderer of its own that spends about 2 s of CPU in the browser's first
 * seconds (5.5 s of CPU in the first 6 s with it, 2.6 s without, measured on a 2-core machine). A page
 * measured in that window shares the CPU with it. Nothing a visitor's browser does on the page's CPU budget.
 */
export const QUIET_DISABLED_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup'];

/**
 * `flags` with every `--disable-features` among them, and `features`, merged into one switch. Chromium keeps
 * only the last `--disable-features` it is given, so a second one would silently undo a launcher's own list.
 */
export function withDisabledFeatures(flags: readonly string[], features: readonly string[]): string[] {
  const prefix = '--disable-features=';
  const listed = flags
    .filter((flag) => flag.startsWith(prefix))
    .flatMap((flag) => flag.slice(prefix.length).split(','));
  const merged = [...new Set([...listed, ...features].filter(Boolean))];
  return [...flags.filter((flag) => !flag.startsWith(prefix)), `${prefix}${merged.join(',')}`];
}
