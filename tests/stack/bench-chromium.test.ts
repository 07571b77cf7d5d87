// The Chromium the benchmarks measure in: Lighthouse's launch keeps chrome-launcher's own disabled features
// and ours in one switch (Chromium keeps only the last --disable-features), and the browser it starts builds
// no WebUI omnibox popup, whose renderer would share the CPU with the page under measurement.
import { readFileSync } from 'node:fs';
import * as chromeLauncher from 'chrome-launcher';
import { describe, expect, it } from 'vitest';
import { commandLineOf, descendantsOf } from '../../dev/process-table.ts';
import { launchLighthouseChrome, lighthouseChromeFlags } from '../bench/web/lighthouse.ts';
import {
  chromiumArgs,
  findChromium,
  QUIET_DISABLED_FEATURES,
  withDisabledFeatures,
} from '../e2e/chromium.ts';

const DISABLE = '--disable-features=';

describe('withDisabledFeatures', () => {
  it('merges every --disable-features switch and the extra features into one, in order, without repeats', () => {
    expect(withDisabledFeatures(['--a', `${DISABLE}X,Y`, '--b', `${DISABLE}Y,Z`], ['Z', 'W'])).toEqual([
      '--a',
      '--b',
      `${DISABLE}X,Y,Z,W`,
    ]);
  });

  it('adds the switch where there was none', () => {
    expect(withDisabledFeatures(['--headless'], ['W'])).toEqual(['--headless', `${DISABLE}W`]);
  });
});

describe('lighthouseChromeFlags', () => {
  it("keeps chrome-launcher's defaults and disables both its features and ours in a single switch", () => {
    const flags = lighthouseChromeFlags(chromiumArgs);
    const switches = flags.filter((flag) => flag.startsWith(DISABLE));
    expect(switches).toHaveLength(1);
    const disabled = (switches[0] as string).slice(DISABLE.length).split(',');
    const launcherDefault = chromeLauncher.Launcher.defaultFlags().find((flag) => flag.startsWith(DISABLE));
    for (const feature of [
      ...(launcherDefault as string).slice(DISABLE.length).split(','),
      ...QUIET_DISABLED_FEATURES,
    ])
      expect(disabled).toContain(feature);
    for (const flag of [...chromiumArgs, '--disable-extensions']) expect(flags).toContain(flag);
  });
});

const chromiumPath = findChromium();
if (!chromiumPath) console.warn('bench-chromium: browser checks skipped: no Chromium found');

describe.skipIf(!chromiumPath || process.platform !== 'linux')('the Chromium Lighthouse measures in', () => {
  it('runs with one --disable-features and starts no top-chrome WebUI renderer', async () => {
    const { chrome, close } = await launchLighthouseChrome(chromiumPath as string, chromiumArgs);
    try {
      const browserLine = readFileSync(`/proc/${chrome.pid}/cmdline`, 'utf8').split('\0');
      expect(browserLine.filter((flag) => flag.startsWith(DISABLE))).toHaveLength(1);
      // Without the quiet features the omnibox popup's renderer starts within about a second of launch.
      const seen: string[] = [];
      for (let tick = 0; tick < 8; tick += 1) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        // A zygote's children carry their argv as one space-separated title: commandLineOf reads either form.
        for (const { pid } of descendantsOf([chrome.pid])) {
          const line = commandLineOf(pid);
          if (line?.includes('--top-chrome-webui')) seen.push(line);
        }
      }
      expect(seen).toEqual([]);
    } finally {
      close();
    }
  });
});
