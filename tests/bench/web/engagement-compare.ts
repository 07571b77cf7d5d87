// Not a bench of its own: first engagement of two builds in one sitting, alternating, for a fair comparison
// on a noisy machine. npx tsx tests/bench/web/engagement-compare.ts <urlA> <urlB> [rounds]
import { chromiumArgs, findChromium } from '../../e2e/chromium.ts';
import { median } from '../stats.ts';
import { measureFirstEngagement } from './engagement.ts';

const [a, b, rounds = '3'] = process.argv.slice(2);
if (!a || !b) throw new Error('usage: engagement-compare.ts <urlA> <urlB> [rounds]');
const chromiumPath = findChromium();
if (!chromiumPath) throw new Error('no Chromium');
const samples: Record<string, number[]> = { [a]: [], [b]: [] };
for (let round = 0; round < Number(rounds); round += 1) {
  for (const url of [a, b]) {
    const figures = await measureFirstEngagement({ url, chromiumPath, chromiumArgs, runs: 4 });
    samples[url]?.push(...figures.samplesMs);
  }
}
for (const [url, values] of Object.entries(samples)) {
  console.log(
    `${url}: median ${Math.round(median(values))} ms of ${values.length} (min ${Math.round(Math.min(...values))}, max ${Math.round(Math.max(...values))})`,
  );
}
