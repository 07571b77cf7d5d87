// `npm run bench:web`: builds web/, serves it the way Firebase Hosting does, and runs Lighthouse (mobile,
// simulated throttling) on `/` beside references: (a) a static snapshot of the same page with no JavaScript
// (the physical limit for this content), (b) a naive build of the same app that imports the full Firestore
// SDK eagerly and renders on the client, and (c) the snapshot plus one empty module script (what any
// JavaScript at all costs in Lighthouse's model; --no-floor leaves it out). Then, in Chromium: the cost of the
// first engagement (first focus on the hero field to the form hydrated, CPU throttled 4x, median of 10) and the
// early-submit path (Enter before the app arrived to the success toast, scripts delayed 2 s, against a local
// stack; --no-early-submit leaves it out). Prints medians, ratios and the targets; writes
// bench-results/web-<timestamp>.json and bench-results/web-latest.json.
//
//   npm run bench:web [-- --runs 5] [--no-build] [--no-floor] [--no-early-submit] [--check] [--compare <figures.json>]
//
// --no-build measures web/dist as it is instead of building first; --check exits non-zero when a target is
// missed; --compare prints the change against an earlier figures file (default: the previous
// bench-results/web-latest.json).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromiumArgs, findChromium } from '../e2e/chromium.ts';
import { startStack } from '../e2e/support/stack.ts';
import { repoRoot, resultsDir, webDir, writeResults } from './paths.ts';
import { median } from './stats.ts';
import { measureEarlySubmit, measureFirstEngagement } from './web/engagement.ts';
import { serveLikeHosting } from './web/hosting.ts';
import { measureJs } from './web/js-sizes.ts';
import {
  CATEGORIES,
  type Category,
  type LighthouseRun,
  METRICS,
  type Metric,
  runLighthouse,
} from './web/lighthouse.ts';
import { buildNaive } from './web/naive-build.ts';
import { type Figures, printReport, type SiteFigures, type SiteId, targetsOf } from './web/report.ts';
import { snapshotPage, withEmptyScript, writeSite } from './web/snapshot.ts';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    'no-build': { type: 'boolean', default: false },
    'no-floor': { type: 'boolean', default: false },
    'no-early-submit': { type: 'boolean', default: false },
    check: { type: 'boolean', default: false },
    compare: { type: 'string' },
  },
});
const runs = Number(args.runs);
if (!Number.isInteger(runs) || runs < 1)
  throw new Error(`--runs must be a positive integer, got ${args.runs}`);

const chromiumPath = findChromium();
if (!chromiumPath) {
  console.error('bench:web needs Chromium: install the Debian package chromium, or set CHROMIUM_PATH.');
  process.exit(2);
}

const workDir = mkdtempSync(path.join(os.tmpdir(), 'goody-bench-web-'));
// The site under test lives in a directory of its own for the whole run: web/dist may be rebuilt meanwhile by
// anything else (npm test, the launcher's default build), which would pull files from under Lighthouse.
const distDir = path.join(workDir, 'site');
if (args['no-build']) {
  const built = path.join(webDir, 'dist');
  if (!existsSync(path.join(built, 'index.html')))
    throw new Error('web/dist/index.html is missing: build first');
  cpSync(built, distDir, { recursive: true });
} else {
  console.log('== building web/ (npm run build -w web, into a directory of its own)');
  const built = spawnSync('npm', ['run', 'build', '-w', 'web', '--', '--outDir', distDir, '--emptyOutDir'], {
    cwd: repoRoot,
    stdio: 'inherit',
  });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
const closers: Array<() => Promise<void>> = [];
const serve = async (dir: string) => {
  const site = await serveLikeHosting(dir);
  closers.push(site.close);
  return site.origin;
};

try {
  const origins = new Map<SiteId, string>();
  origins.set('ours', await serve(distDir));

  console.log('== reference (a): static snapshot of the rendered landing page, scripts removed');
  const snapshot = await snapshotPage({ url: `${origins.get('ours')}/`, chromiumPath, chromiumArgs });
  console.log(`   ${(Buffer.byteLength(snapshot) / 1024).toFixed(1)} kB of HTML and CSS`);
  writeSite(snapshot, distDir, path.join(workDir, 'static'));
  origins.set('static', await serve(path.join(workDir, 'static')));

  console.log('== reference (b): naive build (full firebase/firestore imported by the entry, no prerender)');
  await buildNaive(path.join(workDir, 'naive'));
  origins.set('naive', await serve(path.join(workDir, 'naive')));

  if (!args['no-floor']) {
    console.log('== reference (c): the static snapshot with one empty module script');
    const floor = withEmptyScript(snapshot);
    writeSite(floor.html, distDir, path.join(workDir, 'floor'), floor.files);
    origins.set('floor', await serve(path.join(workDir, 'floor')));
  }

  const samples = new Map<SiteId, LighthouseRun[]>([...origins.keys()].map((id) => [id, []]));
  const reportsDir = path.join(resultsDir, 'lighthouse-latest');
  rmSync(reportsDir, { recursive: true, force: true });
  mkdirSync(reportsDir, { recursive: true });
  // Rounds interleave the sites, so a slow spell of the machine touches all of them alike.
  for (let round = 1; round <= runs; round += 1) {
    for (const [id, origin] of origins) {
      const started = Date.now();
      const run = await runLighthouse(`${origin}/`, chromiumPath, chromiumArgs);
      samples.get(id)?.push(run);
      writeFileSync(path.join(reportsDir, `${id}-${round}.json`), JSON.stringify(run.lhr));
      const { scores, metrics } = run;
      console.log(
        `   run ${round}/${runs} ${id.padEnd(6)} perf ${scores.performance} a11y ${scores.accessibility} ` +
          `bp ${scores['best-practices']} seo ${scores.seo} | FCP ${Math.round(metrics.fcpMs)} ms ` +
          `LCP ${Math.round(metrics.lcpMs)} ms TBT ${Math.round(metrics.tbtMs)} ms CLS ${metrics.cls.toFixed(3)} ` +
          `(${((Date.now() - started) / 1000).toFixed(1)} s)`,
      );
    }
  }

  const summarise = (id: SiteId): SiteFigures => {
    const list = samples.get(id) ?? [];
    return {
      scores: Object.fromEntries(
        CATEGORIES.map((category) => [category, median(list.map((run) => run.scores[category]))]),
      ) as Record<Category, number>,
      metrics: Object.fromEntries(
        (Object.keys(METRICS) as Metric[]).map((key) => [key, median(list.map((run) => run.metrics[key]))]),
      ) as Record<Metric, number>,
      runs: list.map((run) => ({ scores: run.scores, metrics: run.metrics })),
      failedAudits: [...new Set(list.flatMap((run) => run.failedAudits))],
      js:
        id === 'ours'
          ? measureJs(distDir, { entryDefersApp: true })
          : id === 'naive'
            ? measureJs(path.join(workDir, 'naive'), { entryDefersApp: false })
            : null,
    };
  };

  console.log('== first engagement: focus on the hero field -> form hydrated, CPU throttled 4x, 10 runs');
  const engagement = await measureFirstEngagement({
    url: `${origins.get('ours')}/`,
    chromiumPath,
    chromiumArgs,
    runs: 10,
    log: console.log,
  });

  let earlySubmit: Figures['earlySubmit'];
  if (!args['no-early-submit']) {
    console.log(
      '== early submit: Enter before the app -> success toast, scripts delayed 2 s (starts a stack)',
    );
    // Once more if it fails: on a loaded machine the launcher's banner can come out interleaved with the
    // emulator's log, and the stack helper then reports the callables missing.
    const logFile = path.join(resultsDir, 'web-early-submit-stack.log');
    const stack = await startStack({ logFile }).catch((error: unknown) => {
      console.warn(
        `   (the stack did not start cleanly, starting it again: ${String(error).split('\n')[0]})`,
      );
      return startStack({ logFile });
    });
    try {
      earlySubmit = await measureEarlySubmit({
        siteUrl: stack.info.siteUrl,
        chromiumPath,
        chromiumArgs,
        runs: 5,
        log: console.log,
      });
    } finally {
      await stack.stop();
    }
  }

  const ourRuns = samples.get('ours') ?? [];
  const first = ourRuns[0]?.lhr;
  const figures: Figures = {
    date: new Date().toISOString(),
    commit: spawnSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: repoRoot,
      encoding: 'utf8',
    }).stdout.trim(),
    runs,
    environment: {
      lighthouse: first?.lighthouseVersion ?? '',
      browser: first?.environment.hostUserAgent ?? '',
      cpus: `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'unknown'}`,
      node: process.version,
      // Lighthouse's own CPU speed estimate: simulated throttling scales this machine's CPU time, so figures
      // are comparable only between machines (and moments) with a similar index.
      benchmarkIndex: median(ourRuns.map((run) => run.lhr.environment.benchmarkIndex)),
      throttling: 'Lighthouse default: mobile form factor, simulated slow 4G (150 ms RTT), 4x CPU slowdown',
    },
    sites: Object.fromEntries([...origins.keys()].map((id) => [id, summarise(id)])) as Figures['sites'],
    engagement,
    earlySubmit,
    targets: [],
  };
  figures.targets = targetsOf(figures);

  const latestPath = path.join(resultsDir, 'web-latest.json');
  const comparePath = args.compare ?? (existsSync(latestPath) ? latestPath : undefined);
  let previous: Figures | undefined;
  try {
    previous = comparePath ? (JSON.parse(readFileSync(comparePath, 'utf8')) as Figures) : undefined;
    if (previous && !previous.sites) previous = undefined; // written by an older version of this script
  } catch {
    previous = undefined;
  }

  printReport(figures, previous, comparePath ? path.relative(repoRoot, comparePath) : undefined);

  const { datedPath } = writeResults('web', figures);
  console.log(
    `\nfigures written to ${path.relative(repoRoot, datedPath)} and ${path.relative(repoRoot, latestPath)}; ` +
      `Lighthouse reports (JSON) in ${path.relative(repoRoot, reportsDir)}/`,
  );

  if (args.check && figures.targets.some((target) => !target.met)) process.exitCode = 1;
} finally {
  for (const close of closers.reverse()) await close();
  rmSync(workDir, { recursive: true, force: true });
}
