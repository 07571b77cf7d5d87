// What the landing page costs once a visitor engages, measured in real Chromium (playwright-core):
//
// - first engagement: from the first focus on the hero field to the hero form being the app's (hydrated and
//   taken over from the page's inline script), on a CPU throttled 4x through the DevTools protocol, after the
//   page has loaded and gone idle (the entry prefetched, nothing else), as for a visitor who reads first;
// - early submit: from Enter pressed before the app has arrived to the success toast, every app script
//   delayed by a fixed 2 s (route interception), against a local stack (connection test, insert, callables).
import { chromium, type Page } from 'playwright-core';
import { untilChromiumSettles } from '../browser-settle.ts';
import { armPressToToast, MEASURED, type PressToToast } from '../press-to-toast.ts';
import { median } from '../stats.ts';

export interface EngagementFigures {
  cpuSlowdown: number;
  runs: number;
  medianMs: number;
  samplesMs: number[];
}

export interface EarlySubmitFigures {
  scriptDelayMs: number;
  runs: number;
  medianMs: number;
  samplesMs: number[];
  warmUpMs: number;
}

const CPU_SLOWDOWN = 4;
const SCRIPT_DELAY_MS = 2_000;
const TIMEOUT_MS = 60_000;
const HERO_FIELD = 'form[data-signup-source="hero_form"] input[type="email"]';

// Runs in the page before the focus: the time of the first focusin, and the time the hero form is taken over
// by the app (the form pushes its source onto the capture object's `live` list, web/src/lib/signupCapture.ts).
const ARM_ENGAGEMENT = `(() => {
  const capture = (window.__goodySignupCapture ??= { pending: [], live: [] });
  window.__heroLiveAt = new Promise((resolve) => {
    capture.live = new Proxy(capture.live, {
      set(target, key, value) {
        target[key] = value;
        if (value === 'hero_form') resolve(performance.now());
        return true;
      },
    });
  });
  document.addEventListener('focusin', () => { window.__engagedAt ??= performance.now(); }, { capture: true });
})()`;

async function measureEngagementOnce(page: Page, url: string): Promise<number> {
  await page.goto(url, { waitUntil: 'load' });
  // The page is idle: its bootstrap has prefetched the entry, and nothing else runs until the focus.
  await page.waitForLoadState('networkidle');
  await page.waitForTimeout(500);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_SLOWDOWN });
  try {
    await page.evaluate(ARM_ENGAGEMENT);
    await page.focus(HERO_FIELD);
    const liveAt = (await page.evaluate('window.__heroLiveAt')) as number;
    const engagedAt = (await page.evaluate('window.__engagedAt')) as number;
    return liveAt - engagedAt;
  } finally {
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
    await cdp.detach();
  }
}

/** How a measure runs: in which Chromium, how many times, and where its progress lines go. */
interface MeasureOptions {
  chromiumPath: string;
  chromiumArgs: string[];
  runs?: number;
  log?: (line: string) => void;
}

/**
 * Runs `each` `count` times (run 1 to `count`), each time on a new page in a fresh phone-sized context of one
 * Chromium that has finished starting up; closes them all, whatever happens.
 */
async function eachInAFreshPhonePage(
  options: MeasureOptions,
  count: number,
  each: (page: Page, run: number) => Promise<void>,
): Promise<void> {
  const browser = await chromium.launch({ executablePath: options.chromiumPath, args: options.chromiumArgs });
  try {
    await untilChromiumSettles();
    for (let run = 1; run <= count; run += 1) {
      const context = await browser.newContext({ viewport: { width: 412, height: 823 } });
      try {
        const page = await context.newPage();
        page.setDefaultTimeout(TIMEOUT_MS);
        await each(page, run);
      } finally {
        await context.close();
      }
    }
  } finally {
    await browser.close();
  }
}

/**
 * First focus on the hero field to the hero form hydrated, median of `runs`, each in a fresh context of one
 * browser that has finished starting up.
 */
export async function measureFirstEngagement(
  options: MeasureOptions & { url: string },
): Promise<EngagementFigures> {
  const runs = options.runs ?? 10;
  const samplesMs: number[] = [];
  // A fresh context each run: an empty cache, but for the entry the page prefetches when idle.
  await eachInAFreshPhonePage(options, runs, async (page, run) => {
    samplesMs.push(await measureEngagementOnce(page, options.url));
    options.log?.(`   first engagement ${run}/${runs}: ${Math.round(samplesMs.at(-1) as number)} ms`);
  });
  return { cpuSlowdown: CPU_SLOWDOWN, runs, medianMs: median(samplesMs), samplesMs };
}

async function earlySubmitOnce(page: Page, url: string, email: string): Promise<number> {
  await page.route('**/assets/*.js', async (route) => {
    await new Promise((resolve) => setTimeout(resolve, SCRIPT_DELAY_MS));
    await route.continue();
  });
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.evaluate(armPressToToast('enter'));
  const field = page.locator(HERO_FIELD);
  await field.fill(email);
  await field.press('Enter');
  const ms = ((await page.evaluate(MEASURED)) as PressToToast).measuredMs;
  if ((await page.evaluate('location.pathname + location.search')) !== '/')
    throw new Error('the page navigated: the early submit was not captured');
  return ms;
}

/**
 * Enter pressed before the app arrived to the success toast, with every app script delayed 2 s, against a
 * running site (`siteUrl` of a local stack). One warm-up first (it starts the function workers), reported apart.
 */
export async function measureEarlySubmit(
  options: MeasureOptions & { siteUrl: string },
): Promise<EarlySubmitFigures> {
  const runs = options.runs ?? 5;
  const samplesMs: number[] = [];
  let warmUpMs = Number.NaN;
  await eachInAFreshPhonePage(options, runs + 1, async (page, index) => {
    const run = index - 1;
    const ms = await earlySubmitOnce(
      page,
      `${options.siteUrl}/`,
      `bench-early-${Date.now()}-${run}@example.com`,
    );
    if (run === 0) warmUpMs = ms;
    else samplesMs.push(ms);
    options.log?.(
      `   early submit ${run === 0 ? 'warm-up (not counted)' : `${run}/${runs}`}: ${Math.round(ms)} ms`,
    );
  });
  return { scriptDelayMs: SCRIPT_DELAY_MS, runs, medianMs: median(samplesMs), samplesMs, warmUpMs };
}
