// One Lighthouse run: Lighthouse's default config (mobile form factor, simulated throttling), in Debian's
// Chromium launched fresh for the run, with a user-data directory of its own.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse, { type Result } from 'lighthouse';
import { QUIET_DISABLED_FEATURES, withDisabledFeatures } from '../../e2e/chromium.ts';

export const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'] as const;
export type Category = (typeof CATEGORIES)[number];

export const METRICS = {
  fcpMs: 'first-contentful-paint',
  lcpMs: 'largest-contentful-paint',
  tbtMs: 'total-blocking-time',
  cls: 'cumulative-layout-shift',
  speedIndexMs: 'speed-index',
} as const;
export type Metric = keyof typeof METRICS;

export interface LighthouseRun {
  scores: Record<Category, number>;
  metrics: Record<Metric, number>;
  /** Audits of the four categories that did not pass, for the report. */
  failedAudits: string[];
  lhr: Result;
}

/**
 * Runs Lighthouse, retrying a run that Lighthouse itself reports as broken (on a busy machine the trace
 * now and then misses its navigation start, NO_NAVSTART); a page that really fails fails every time.
 */
export async function runLighthouse(
  url: string,
  chromiumPath: string,
  chromiumArgs: string[],
  attempts = 3,
): Promise<LighthouseRun> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await runLighthouseOnce(url, chromiumPath, chromiumArgs);
    } catch (error) {
      if (!(error instanceof LighthouseRuntimeError) || attempt >= attempts) throw error;
      console.warn(`   (Lighthouse run failed with ${error.message}; running it again)`);
    }
  }
}

/**
 * The flags the Lighthouse runs launch Chromium with (chrome-launcher's defaults are turned off and passed
 * here instead): chrome-launcher's own, ours, and one --disable-features holding both its list and
 * QUIET_DISABLED_FEATURES, since Chromium keeps only the last such switch.
 */
export function lighthouseChromeFlags(chromiumArgs: readonly string[]): string[] {
  return withDisabledFeatures(
    [...chromeLauncher.Launcher.defaultFlags(), '--disable-setuid-sandbox', ...chromiumArgs],
    QUIET_DISABLED_FEATURES,
  );
}

class LighthouseRuntimeError extends Error {}

/** Chromium as a Lighthouse run gets it: fresh, with a user-data directory of its own, which `close` removes. */
export async function launchLighthouseChrome(
  chromiumPath: string,
  chromiumArgs: string[],
): Promise<{ chrome: chromeLauncher.LaunchedChrome; close(): void }> {
  const userDataDir = mkdtempSync(path.join(os.tmpdir(), 'goody-lighthouse-'));
  const chrome = await chromeLauncher.launch({
    chromePath: chromiumPath,
    chromeFlags: lighthouseChromeFlags(chromiumArgs),
    ignoreDefaultFlags: true,
    userDataDir,
    logLevel: 'silent',
  });
  return {
    chrome,
    close() {
      chrome.kill();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

async function runLighthouseOnce(url: string, chromiumPath: string, chromiumArgs: string[]) {
  const { chrome, close } = await launchLighthouseChrome(chromiumPath, chromiumArgs);
  try {
    const result = await lighthouse(url, {
      port: chrome.port,
      output: 'json',
      logLevel: 'error',
      onlyCategories: [...CATEGORIES],
    });
    if (!result) throw new Error(`Lighthouse returned no result for ${url}`);
    const lhr = result.lhr;
    if (lhr.runtimeError) {
      throw new LighthouseRuntimeError(`${lhr.runtimeError.code}: ${lhr.runtimeError.message}`);
    }

    const scores = Object.fromEntries(
      CATEGORIES.map((id) => [id, Math.round((lhr.categories[id]?.score ?? Number.NaN) * 100)]),
    ) as Record<Category, number>;
    const metrics = Object.fromEntries(
      Object.entries(METRICS).map(([key, audit]) => [key, lhr.audits[audit]?.numericValue ?? Number.NaN]),
    ) as Record<Metric, number>;
    const failedAudits = CATEGORIES.flatMap((id) =>
      (lhr.categories[id]?.auditRefs ?? [])
        .filter((ref) => ref.weight > 0)
        .map((ref) => lhr.audits[ref.id])
        .filter((audit) => audit && audit.score !== null && audit.score < 0.9)
        .map((audit) => `${id}: ${audit?.id} (${audit?.displayValue ?? audit?.score})`),
    );
    return { scores, metrics, failedAudits, lhr } satisfies LighthouseRun;
  } finally {
    close();
  }
}
