// `npm run bench:signup`: how long a visitor waits for the answer to a sign-up. Starts `npm start`'s stack as a
// child process on free ports (Google's emulators and the two stand-ins), then times the click on submit to
// the success toast in Chromium: the connection test, the insert, both callables (which only check the body) and the
// toast render. Two profiles:
//
//   warm   N sign-ups (default 20), each on a landing page loaded in the same browser, its app idle-loaded:
//          target median <= 300 ms
//   phone  M sign-ups (default 5), each on a fresh page in a fresh browser profile (no cache; measured once the
//          browser has finished starting up), CPU 4x slower: the page loaded and the address typed on an
//          emulated link (150 ms round trips, 1.6 Mbps down / 750 kbps up), so the app arrives as it would
//          while a visitor types; then the button pressed, and the press -> toast path priced as a real phone
//          link charges it (tests/bench/request-path.ts): every request on the path recorded over the DevTools
//          protocol, on loopback (the link's emulation off from the press, the CPU still 4x), then
//
//            priced = the page's own time: the measured press -> toast time, minus what the path's requests
//                     took on loopback (the local trips and the emulators' work, left out)
//                   + 150 ms for each sequential round trip on the path: each request, each CORS preflight
//                     (Chrome's emulation delays no preflight), and 2 more for a request that opened its
//                     connection (TCP 1 + TLS 1.3 1: the local stack is plain HTTP, a phone's link is HTTPS)
//                   + the path's bytes at 1.6 Mbps down / 750 kbps up.
//
//          Requests that ran side by side count once (the longest chain of requests each started after the one
//          before it had finished). With App Check on, its token exchange is priced like any request when the
//          path waits for it. tests/stack/request-path.test.ts checks the price against known pages and a
//          slow link. Prints each sign-up's path (method, path, preflight or not, new connection or not), its
//          sequential round trips, and the medians of the priced and measured times.
//
// Prints median, p95, min and max of each; writes bench-results/signup-<timestamp>.json and signup-latest.json.
//
//   npm run bench:signup [-- --signups 20] [--phone-signups 5] [--against <checkout>] [--app-check]
//
//   --signups 0       no warm profile (the uncounted warm-up sign-up still runs)
//   --against DIR     also another commit's site, on the same stack, its phone sign-ups alternating with this
//                     build's: DIR holds that commit's files (`npx tsx tests/bench/other-build.ts 2f21e74
//                     /tmp/goody-2f21e74` makes one); its site is built and served as that commit's `npm start`
//                     would (tests/bench/other-build.ts)
//   --app-check       App Check on: the site built with a site key, each page on App Check's debug provider, and
//                     Google's reCAPTCHA and token-exchange hosts answered over HTTPS on loopback
//                     (tests/bench/app-check-stand-in.ts), so the exchange, its preflight and its connection
//                     are priced when the path waits for them (needs a launcher and a web config that take a
//                     site key on the emulators); the callables enforce it (GOODY_ENFORCE_APP_CHECK), and each
//                     phone sign-up prints when its token exchange ran, from the press, and whether it was on
//                     the path
//
// One warm-up sign-up runs first and is reported apart: it starts the function workers, which a deployed
// function keeps warm (or not) on its own terms.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { chromiumArgs, findChromium } from '../e2e/chromium.ts';
import { FORMS, openLanding, TEXT } from '../e2e/support/app.ts';
import { startStack } from '../e2e/support/stack.ts';
import { APP_CHECK_STACK_ENV, isAppCheckExchange, startAppCheckStandIn } from './app-check-stand-in.ts';
import { untilChromiumSettles } from './browser-settle.ts';
import { serveOtherBuild } from './other-build.ts';
import { repoRoot, resultsDir, writeResults } from './paths.ts';
import { armPressToToast, MEASURED, type PressToToast } from './press-to-toast.ts';
import {
  formatPath,
  PHONE_LINK,
  type PricedPath,
  pathSignature,
  pricePath,
  RequestRecorder,
} from './request-path.ts';
import { median, quantile } from './stats.ts';
import type { HostedSite } from './web/hosting.ts';

const { values: args } = parseArgs({
  options: {
    signups: { type: 'string', default: '20' },
    'phone-signups': { type: 'string', default: '5' },
    against: { type: 'string' },
    'app-check': { type: 'boolean', default: false },
  },
});
const signups = Number(args.signups);
const phoneSignups = Number(args['phone-signups']);
if (!Number.isInteger(signups) || signups < 0) throw new Error(`--signups must be a whole number`);
if (!Number.isInteger(phoneSignups) || phoneSignups < 0)
  throw new Error(`--phone-signups must be a whole number`);

/** A mid-range phone on a mobile link, as Lighthouse's mobile profile models it (request-path.ts's link). */
const PHONE = {
  cpuSlowdown: 4,
  latencyMs: PHONE_LINK.rttMs,
  downloadKbps: PHONE_LINK.downloadKbps,
  uploadKbps: PHONE_LINK.uploadKbps,
};

const chromiumPath = findChromium();
if (!chromiumPath) {
  console.error('bench:signup needs Chromium: install the Debian package chromium, or set CHROMIUM_PATH.');
  process.exit(2);
}

const ARM_TIMER = armPressToToast('click');

interface PhoneSample {
  measuredMs: number;
  pricedMs: number;
  roundTrips: number;
  preflights: number;
  newConnections: number;
  path: PricedPath;
  /** With --app-check: the page's token exchanges (preflights too), in ms from the press (negative: before it). */
  appCheckExchanges: AppCheckExchange[];
}

interface AppCheckExchange {
  method: string;
  preflight: boolean;
  /** It opened its connection (no preconnect had): TCP + TLS on a real link. */
  newConnection: boolean;
  startedMs: number;
  finishedMs: number | null;
}

/**
 * When a sign-up's token exchange (its preflight and its POST) would have finished on a real link, in ms from
 * the press: from when the page asked for it, one round trip per request and 2 more per new connection. The
 * exchange ran while the address was typed on Chrome's emulated link, which delays neither its preflight nor
 * a TLS set-up, so its recorded finish is earlier than a phone's.
 */
function exchangeOnRealLink(exchanges: readonly AppCheckExchange[]): {
  roundTrips: number;
  finishedMs: number;
} {
  const roundTrips = exchanges.reduce(
    (sum, exchange) => sum + 1 + (exchange.newConnection ? PHONE_LINK.connectionRoundTrips : 0),
    0,
  );
  const startedMs = Math.min(...exchanges.map((exchange) => exchange.startedMs));
  return { roundTrips, finishedMs: startedMs + roundTrips * PHONE_LINK.rttMs };
}

const userDataDir = mkdtempSync(path.join(os.tmpdir(), 'goody-bench-signup-'));
console.log('== starting the stack (npm start on free ports; it builds first, which takes a while)');
const startedAt = Date.now();
const appCheck = args['app-check'] ? await startAppCheckStandIn() : undefined;
const stack = await startStack({
  logFile: path.join(resultsDir, 'signup-stack.log'),
  env: appCheck ? APP_CHECK_STACK_ENV : {},
});
const browserArgs = [...chromiumArgs, ...(appCheck?.chromiumArgs ?? [])];
console.log(`   up at ${stack.info.siteUrl} in ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
const otherDir = args.against ? mkdtempSync(path.join(os.tmpdir(), 'goody-bench-other-')) : undefined;

let other: HostedSite | undefined;
try {
  if (args.against && otherDir)
    other = await serveOtherBuild(args.against, stack.info, path.join(otherDir, 'site'), console.log);
  if (other) console.log(`   ${args.against}'s site at ${other.origin}`);
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    args: browserArgs,
    viewport: { width: 412, height: 823 },
  });
  if (appCheck) await context.addInitScript(appCheck.initScript);
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
      const ms = ((await page.evaluate(MEASURED)) as PressToToast).measuredMs;
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

  // The phone: a fresh browser profile for each sign-up, so nothing is cached (and on disk: an incognito
  // context makes no preconnect). Loaded and typed on DevTools' emulated link, priced from the press on.
  const phoneSignUp = async (siteUrl: string, index: number): Promise<PhoneSample> => {
    const profile = mkdtempSync(path.join(os.tmpdir(), 'goody-bench-phone-'));
    const phone = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      args: browserArgs,
      viewport: { width: 412, height: 823 },
      isMobile: true,
      hasTouch: true,
    });
    if (appCheck) await phone.addInitScript(appCheck.initScript);
    try {
      // A fresh browser spends its first seconds starting up on both cores: the phone's page waits for it.
      await untilChromiumSettles();
      const page = phone.pages()[0] ?? (await phone.newPage());
      const cdp = await phone.newCDPSession(page);
      const recorder = await RequestRecorder.attach(cdp);
      const emulateLink = (on: boolean) =>
        cdp.send('Network.emulateNetworkConditions', {
          offline: false,
          latency: on ? PHONE.latencyMs : 0,
          downloadThroughput: on ? (PHONE.downloadKbps * 1000) / 8 : -1,
          uploadThroughput: on ? (PHONE.uploadKbps * 1000) / 8 : -1,
        });
      await emulateLink(true);
      await cdp.send('Emulation.setCPUThrottlingRate', { rate: PHONE.cpuSlowdown });
      await page.goto(siteUrl, { waitUntil: 'load' });
      await page.evaluate(ARM_TIMER);
      const submit = page.getByRole('button', { name: FORMS.hero.submit, exact: true });
      const field = page
        .locator('form')
        .filter({ has: submit })
        .getByRole('textbox', { name: 'Email address' });
      await field.click();
      await field.pressSequentially(`phone-${Date.now()}-${index}@example.com`, { delay: 40 });
      // From the press on, the link is priced from the record, not emulated (which would charge it twice).
      await emulateLink(false);
      await submit.click();
      const window = (await page.evaluate(MEASURED)) as PressToToast;
      await recorder.settled(window.toastAt);
      const priced = pricePath(recorder.requests(), window, PHONE_LINK);
      const appCheckExchanges = recorder
        .requests()
        .filter((request) => /^https?:/.test(request.url) && isAppCheckExchange(request.url))
        .map((request) => ({
          method: request.method,
          preflight: request.preflightFor !== undefined,
          newConnection: request.localConnectMs !== undefined,
          startedMs: request.startedAt - window.pressAt,
          finishedMs: request.finishedAt === undefined ? null : request.finishedAt - window.pressAt,
        }));
      return {
        measuredMs: window.measuredMs,
        pricedMs: priced.pricedMs,
        roundTrips: priced.roundTrips,
        preflights: priced.preflights,
        newConnections: priced.newConnections,
        path: priced,
        appCheckExchanges,
      };
    } finally {
      await phone.close();
      rmSync(profile, { recursive: true, force: true });
    }
  };

  const builds = [
    { name: 'this build', siteUrl: stack.info.siteUrl, samples: [] as PhoneSample[] },
    ...(other ? [{ name: args.against as string, siteUrl: other.origin, samples: [] as PhoneSample[] }] : []),
  ];
  for (let index = 1; index <= phoneSignups; index += 1) {
    for (const build of builds) {
      const sample = await phoneSignUp(build.siteUrl, index);
      build.samples.push(sample);
      const first = build.samples[0] as PhoneSample;
      console.log(
        `   phone sign-up ${index}/${phoneSignups}${other ? ` (${build.name})` : ''}: priced ${Math.round(sample.pricedMs)} ms ` +
          `(the page's own ${Math.round(sample.path.pageMs)} ms at ${PHONE.cpuSlowdown}x CPU + ` +
          `${sample.roundTrips} sequential round trips)`,
      );
      if (appCheck) {
        // Where App Check's token came from: an exchange finished before the press is not on the path.
        const exchanges = sample.appCheckExchanges;
        const finished = exchanges
          .filter((exchange) => !exchange.preflight)
          .map((exchange) => exchange.finishedMs);
        const last = finished.includes(null) ? null : Math.max(...(finished as number[]));
        const real = exchangeOnRealLink(exchanges);
        console.log(
          finished.length === 0
            ? '     App Check: NO token exchange recorded (is App Check on in this build?)'
            : `     App Check: token exchange (${exchanges.length} requests, ` +
                `${exchanges.filter((exchange) => exchange.newConnection).length} new connections) asked for at ` +
                `${Math.round(Math.min(...exchanges.map((exchange) => exchange.startedMs)))} ms, finished at ` +
                `${last === null ? 'never' : `${Math.round(last)} ms`} from the press ` +
                `(${last !== null && last <= 0 ? 'before it: off the path' : 'AFTER it: the path may wait for it'}); ` +
                `on a real link ${real.roundTrips} round trips, done by about ${Math.round(real.finishedMs)} ms`,
        );
      }
      // The whole path for a build's first sign-up, and again whenever one takes another path.
      if (index === 1 || pathSignature(sample.path) !== pathSignature(first.path)) {
        if (index > 1) console.log("     another path than the first sign-up's:");
        for (const line of formatPath(sample.path, '     ')) console.log(line);
      }
    }
  }
  const phoneFigures = (samples: PhoneSample[]) =>
    samples.length > 0
      ? {
          medianMs: median(samples.map((s) => s.pricedMs)),
          minMs: Math.min(...samples.map((s) => s.pricedMs)),
          maxMs: Math.max(...samples.map((s) => s.pricedMs)),
          measuredMedianMs: median(samples.map((s) => s.measuredMs)),
          pageMedianMs: median(samples.map((s) => s.path.pageMs)),
          linkMedianMs: median(samples.map((s) => s.path.linkMs)),
          localOnPathMedianMs: median(samples.map((s) => s.path.localOnPathMs)),
          roundTripsMedian: median(samples.map((s) => s.roundTrips)),
          signups: samples.length,
          samples: samples.map((s) => ({
            pricedMs: s.pricedMs,
            measuredMs: s.measuredMs,
            pageMs: s.path.pageMs,
            linkMs: s.path.linkMs,
            localOnPathMs: s.path.localOnPathMs,
            roundTrips: s.roundTrips,
            preflights: s.preflights,
            newConnections: s.newConnections,
            ...(appCheck ? { appCheckExchanges: s.appCheckExchanges } : {}),
            path: s.path.requests.map((item) => ({
              method: item.request.method,
              url: item.request.url,
              type: item.request.type,
              preflight: item.preflight,
              newConnection: item.newConnection,
              onPath: item.onPath,
              roundTrips: item.roundTrips,
              localMs: item.localMs,
              transferMs: item.transferMs,
              status: item.request.status,
              failed: item.request.failed,
            })),
          })),
        }
      : null;
  const phoneSamples = builds[0]?.samples ?? [];

  const figures = {
    date: new Date().toISOString(),
    signups,
    warmUpMs,
    medianMs: samples.length > 0 ? median(samples) : null,
    p95Ms: samples.length > 0 ? quantile(samples, 0.95) : null,
    minMs: samples.length > 0 ? Math.min(...samples) : null,
    maxMs: samples.length > 0 ? Math.max(...samples) : null,
    samplesMs: samples,
    targetMedianMs: 300,
    phone:
      phoneSamples.length > 0
        ? {
            profile: PHONE,
            link: PHONE_LINK,
            pricing:
              'measured press -> toast (4x CPU, loopback) - the local time of the requests on the path + ' +
              'sequential round trips x RTT (requests, preflights, 2 more per new connection: TCP + TLS 1.3) + ' +
              'transfer at the link rates (tests/bench/request-path.ts)',
            appCheck: args['app-check'],
            ...phoneFigures(phoneSamples),
          }
        : null,
    against: other
      ? { checkout: path.resolve(args.against as string), ...phoneFigures(builds[1]?.samples ?? []) }
      : null,
    environment: { cpus: `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'unknown'}`, node: process.version },
  };
  if (samples.length > 0) {
    const warm = figures as { medianMs: number; p95Ms: number; minMs: number; maxMs: number };
    console.log(
      `\nclick on submit -> success toast, ${signups} sign-ups in Chromium against npm start's stack:\n` +
        `  median ${Math.round(warm.medianMs)} ms, p95 ${Math.round(warm.p95Ms)} ms ` +
        `(min ${Math.round(warm.minMs)}, max ${Math.round(warm.maxMs)}); target median <= 300 ms: ` +
        (warm.medianMs <= 300 ? 'met' : 'MISSED'),
    );
  }
  const priced = builds.map((build) => ({ build, figures: phoneFigures(build.samples) }));
  for (const { build, figures: phone } of priced) {
    if (!phone) continue;
    console.log(
      `phone profile, priced (${PHONE.cpuSlowdown}x CPU, ${PHONE_LINK.rttMs} ms RTT, preflights and TCP + TLS ` +
        `counted; fresh page, typed then pressed), ${phone.signups} sign-ups${other ? `, ${build.name}` : ''}:\n` +
        `  median ${Math.round(phone.medianMs)} ms (min ${Math.round(phone.minMs)}, max ${Math.round(phone.maxMs)}); ` +
        `${phone.roundTripsMedian} sequential round trips; medians of the parts: the page's own ${Math.round(phone.pageMedianMs)} ms, ` +
        `the link ${Math.round(phone.linkMedianMs)} ms (left out: ${Math.round(phone.localOnPathMedianMs)} ms in the local ` +
        `requests, of ${Math.round(phone.measuredMedianMs)} ms measured on loopback)`,
    );
  }
  if (appCheck && phoneSamples.length > 0) {
    const before = phoneSamples.filter((sample) =>
      sample.appCheckExchanges.some(
        (exchange) => !exchange.preflight && exchange.finishedMs !== null && exchange.finishedMs <= 0,
      ),
    ).length;
    const realBefore = phoneSamples.filter(
      (sample) =>
        sample.appCheckExchanges.length > 0 && exchangeOnRealLink(sample.appCheckExchanges).finishedMs <= 0,
    ).length;
    const onPath = phoneSamples.filter((sample) =>
      sample.path.requests.some((item) => item.onPath && isAppCheckExchange(item.request.url)),
    ).length;
    const sentAt = median(
      phoneSamples.flatMap((sample) =>
        sample.appCheckExchanges
          .filter((exchange) => !exchange.preflight)
          .map((exchange) => exchange.startedMs),
      ),
    );
    console.log(
      `App Check (debug provider, ${appCheck.exchanges()} token exchanges answered): the token exchanged before ` +
        `the press in ${before} of ${phoneSamples.length} phone sign-ups (median sent ${Math.round(-sentAt)} ms ` +
        `before it; on a real link, its round trips priced, before it in ${realBefore}), the exchange on the ` +
        `priced path in ${onPath}`,
    );
  }
  const [ours, theirs] = priced.map((entry) => entry.figures);
  if (ours && theirs)
    console.log(
      `  this build / ${args.against}: ${(ours.medianMs / theirs.medianMs).toFixed(2)} (priced medians)`,
    );
  const { datedPath } = writeResults('signup', figures);
  console.log(
    `figures written to ${path.relative(repoRoot, datedPath)} and bench-results/signup-latest.json`,
  );
} finally {
  await other?.close();
  await appCheck?.close();
  await stack.stop();
  rmSync(userDataDir, { recursive: true, force: true });
  if (otherDir) rmSync(otherDir, { recursive: true, force: true });
}
