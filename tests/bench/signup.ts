// `npm run bench:signup`: how long a visitor waits for the answer to a sign-up. Starts `npm start`'s stack as a
// child process on free ports (Google's emulators and the two stand-ins), then times the click on submit to
// the success toast in Chromium: the connection test, the insert, both callables (which only enqueue) and the
// toast render. Two profiles:
//
//   warm   N sign-ups (default 20), each on a landing page loaded in the same browser, its app idle-loaded:
//          target median <= 300 ms
//   phone  M sign-ups (default 5), each on a fresh page in a fresh browser profile (no cache; measured once the
//          browser has finished starting up), CPU 4x slower,
//          150 ms round trips, 1.6 Mbps down / 750 kbps up: the address typed, then the button pressed
//          (the app arrives while the visitor types, or the press is held until it does): target <= 900 ms
//
// Prints median, p95, min and max of each; writes bench-results/signup-<timestamp>.json and signup-latest.json.
//
//   npm run bench:signup [-- --signups 20] [--phone-signups 5]
//
// One warm-up sign-up runs first and is reported apart: it starts the function workers, which a deployed
// function keeps warm (or not) on its own terms.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { chromiumArgs, findChromium } from '../e2e/chromium.ts';
import { FORMS, openLanding, TEXT } from '../e2e/support/app.ts';
import { startStack } from '../e2e/support/stack.ts';
import { untilChromiumSettles } from './browser-settle.ts';
import { repoRoot, resultsDir } from './paths.ts';
import { median, quantile, timestamp } from './stats.ts';

const { values: args } = parseArgs({
  options: { signups: { type: 'string', default: '20' }, 'phone-signups': { type: 'string', default: '5' } },
});
const signups = Number(args.signups);
const phoneSignups = Number(args['phone-signups']);
if (!Number.isInteger(signups) || signups < 1) throw new Error(`--signups must be a positive integer`);
if (!Number.isInteger(phoneSignups) || phoneSignups < 0)
  throw new Error(`--phone-signups must be a whole number`);

/** A mid-range phone on a mobile link, as Lighthouse's mobile profile models it. */
const PHONE = { cpuSlowdown: 4, latencyMs: 150, downloadKbps: 1_600, uploadKbps: 750 };

const chromiumPath = findChromium();
if (!chromiumPath) {
  console.error('bench:signup needs Chromium: install the Debian package chromium, or set CHROMIUM_PATH.');
  process.exit(2);
}

// Runs in the page: from the click on the form's submit button (captured before the app sees it) to the
// first frame that shows the success toast. Plain JavaScript, so the bundler adds nothing to it.
const ARM_TIMER = `(() => {
  window.__signupMs = new Promise((resolve, reject) => {
    let clickedAt;
    document.addEventListener('click', (event) => {
      if (event.target instanceof Element && event.target.closest('form button[type="submit"]')) {
        clickedAt = performance.now();
      }
    }, { capture: true });
    const observer = new MutationObserver(() => {
      const toast = clickedAt === undefined ? null : document.querySelector('[data-variant]');
      if (!toast) return;
      observer.disconnect();
      if (toast.getAttribute('data-variant') !== 'success') reject(new Error('error toast: ' + toast.textContent));
      else requestAnimationFrame(() => resolve(performance.now() - clickedAt));
    });
    observer.observe(document.body, { childList: true, subtree: true });
  });
})()`;

const userDataDir = mkdtempSync(path.join(os.tmpdir(), 'goody-bench-signup-'));
console.log('== starting the stack (npm start on free ports; it builds first, which takes a while)');
const startedAt = Date.now();
const stack = await startStack({ logFile: path.join(resultsDir, 'signup-stack.log') });
console.log(`   up at ${stack.info.siteUrl} in ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);

try {
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    args: chromiumArgs,
    viewport: { width: 412, height: 823 },
  });
  await untilChromiumSettles();
  const signUpOnce = async (index: number): Promise<number> => {
    const page = await context.newPage();
    try {
      await openLanding(page, stack.info.siteUrl);
      // The Firebase module loads when the browser is idle after load, as it would while a visitor types.
      await page.waitForLoadState('networkidle');
      await page.evaluate(ARM_TIMER);
      const submit = page.getByRole('button', { name: FORMS.hero.submit, exact: true });
      const form = page.locator('form').filter({ has: submit });
      await form
        .getByRole('textbox', { name: 'Email address' })
        .fill(`bench-${Date.now()}-${index}@example.com`);
      await submit.click();
      const ms = await page.evaluate('window.__signupMs');
      await page.getByText(TEXT.heroSuccessTitle).first().waitFor();
      return ms as number;
    } finally {
      await page.close();
    }
  };

  const warmUpMs = await signUpOnce(0);
  console.log(`   warm-up sign-up (starts the function workers, not counted): ${Math.round(warmUpMs)} ms`);
  const samples: number[] = [];
  for (let index = 1; index <= signups; index += 1) {
    samples.push(await signUpOnce(index));
    console.log(`   sign-up ${index}/${signups}: ${Math.round(samples.at(-1) as number)} ms`);
  }
  await context.close();

  // The phone: a fresh browser profile for each sign-up, so nothing is cached; throttled through DevTools.
  const phoneSamples: number[] = [];
  for (let index = 1; index <= phoneSignups; index += 1) {
    const profile = mkdtempSync(path.join(os.tmpdir(), 'goody-bench-phone-'));
    const phone = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      args: chromiumArgs,
      viewport: { width: 412, height: 823 },
      isMobile: true,
      hasTouch: true,
    });
    try {
      // A fresh browser spends its first seconds starting up on both cores: the phone's page waits for it.
      await untilChromiumSettles();
      const page = phone.pages()[0] ?? (await phone.newPage());
      const cdp = await phone.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: PHONE.latencyMs,
        downloadThroughput: (PHONE.downloadKbps * 1000) / 8,
        uploadThroughput: (PHONE.uploadKbps * 1000) / 8,
      });
      await cdp.send('Emulation.setCPUThrottlingRate', { rate: PHONE.cpuSlowdown });
      await page.goto(stack.info.siteUrl, { waitUntil: 'load' });
      await page.evaluate(ARM_TIMER);
      const submit = page.getByRole('button', { name: FORMS.hero.submit, exact: true });
      const field = page
        .locator('form')
        .filter({ has: submit })
        .getByRole('textbox', { name: 'Email address' });
      await field.click();
      await field.pressSequentially(`phone-${Date.now()}-${index}@example.com`, { delay: 40 });
      await submit.click();
      phoneSamples.push((await page.evaluate('window.__signupMs')) as number);
      console.log(
        `   phone sign-up ${index}/${phoneSignups}: ${Math.round(phoneSamples.at(-1) as number)} ms`,
      );
    } finally {
      await phone.close();
      rmSync(profile, { recursive: true, force: true });
    }
  }

  const figures = {
    date: new Date().toISOString(),
    signups,
    warmUpMs,
    medianMs: median(samples),
    p95Ms: quantile(samples, 0.95),
    minMs: Math.min(...samples),
    maxMs: Math.max(...samples),
    samplesMs: samples,
    targetMedianMs: 300,
    phone:
      phoneSamples.length > 0
        ? {
            profile: PHONE,
            signups: phoneSamples.length,
            medianMs: median(phoneSamples),
            minMs: Math.min(...phoneSamples),
            maxMs: Math.max(...phoneSamples),
            samplesMs: phoneSamples,
            targetMedianMs: 900,
          }
        : null,
    environment: { cpus: `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'unknown'}`, node: process.version },
  };
  console.log(
    `\nclick on submit -> success toast, ${signups} sign-ups in Chromium against npm start's stack:\n` +
      `  median ${Math.round(figures.medianMs)} ms, p95 ${Math.round(figures.p95Ms)} ms ` +
      `(min ${Math.round(figures.minMs)}, max ${Math.round(figures.maxMs)}); target median <= 300 ms: ` +
      (figures.medianMs <= 300 ? 'met' : 'MISSED'),
  );
  if (figures.phone) {
    console.log(
      `phone profile (4x CPU, 150 ms RTT, 1.6 Mbps; fresh page, typed then pressed), ${figures.phone.signups} sign-ups:\n` +
        `  median ${Math.round(figures.phone.medianMs)} ms (min ${Math.round(figures.phone.minMs)}, max ` +
        `${Math.round(figures.phone.maxMs)}); target median <= 900 ms: ${figures.phone.medianMs <= 900 ? 'met' : 'MISSED'}`,
    );
  }
  mkdirSync(resultsDir, { recursive: true });
  const json = `${JSON.stringify(figures, null, 2)}\n`;
  const datedPath = path.join(resultsDir, `signup-${timestamp()}.json`);
  writeFileSync(datedPath, json);
  writeFileSync(path.join(resultsDir, 'signup-latest.json'), json);
  console.log(
    `figures written to ${path.relative(repoRoot, datedPath)} and bench-results/signup-latest.json`,
  );
} finally {
  await stack.stop();
  rmSync(userDataDir, { recursive: true, force: true });
}
