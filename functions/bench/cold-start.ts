// npm run bench:cold-start [-- --runs 15]
//
// How long a cold instance takes to load the functions module (lib/, as deployed), against the same
// module written the usual eager way: firebase-admin initialised and its Firestore created, and a
// nodemailer transport made, at the top of the module. Each sample is a fresh Node process; the
// figure is the time loading takes inside it (and, beside it, the whole process's).

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
const runs = Number(values.runs);
const functionsDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const lib = join(functionsDir, 'lib', 'functions', 'src', 'index.js');

console.log('Building functions/lib with tsc ...');
execFileSync(
  process.execPath,
  [
    join(functionsDir, '..', 'node_modules', 'typescript', 'bin', 'tsc'),
    '-p',
    join(functionsDir, 'tsconfig.json'),
  ],
  {
    stdio: 'inherit',
  },
);
if (!existsSync(lib)) throw new Error(`${lib} was not built`);

/** What an eager module does at load time, which ours defers to the first call that needs it. */
const EAGER = `
const { initializeApp } = require('firebase-admin/app');
const { getFirestore } = require('firebase-admin/firestore');
getFirestore(initializeApp({ projectId: 'demo-goody' }));
require('nodemailer').createTransport({ url: 'smtp://127.0.0.1:2525' });
`;

/** The child: loads the module (and, eagerly, the heavy ones too) and reports the time and what got loaded. */
const child = (eager: boolean) => `
const start = process.hrtime.bigint();
const fn = require(${JSON.stringify(lib)});
${eager ? EAGER : ''}
const ms = Number(process.hrtime.bigint() - start) / 1e6;
const loaded = Object.keys(require.cache);
const has = (part) => loaded.some((path) => path.includes(part));
process.stdout.write(JSON.stringify({
  ms,
  exports: Object.keys(fn),
  firestore: has('/@google-cloud/firestore/'),
  nodemailer: has('/nodemailer/'),
  modules: loaded.length,
}));
`;

interface Sample {
  ms: number;
  wallMs: number;
  exports: string[];
  firestore: boolean;
  nodemailer: boolean;
  modules: number;
}

function sample(eager: boolean): Sample {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, ['-e', child(eager)], { cwd: functionsDir, encoding: 'utf8' });
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(result.stderr);
  return { ...(JSON.parse(result.stdout) as Omit<Sample, 'wallMs'>), wallMs };
}

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
};

// Warm the OS file cache once for each, then alternate so drift hits both alike.
sample(false);
sample(true);
const lazy: Sample[] = [];
const eager: Sample[] = [];
for (let i = 0; i < runs; i += 1) {
  lazy.push(sample(false));
  eager.push(sample(true));
}

const row = (name: string, samples: Sample[]) => {
  const ms = samples.map((s) => s.ms);
  const wall = samples.map((s) => s.wallMs);
  const first = samples[0] as Sample;
  return `${name.padEnd(8)} load median ${percentile(ms, 50).toFixed(1).padStart(6)} ms  p90 ${percentile(
    ms,
    90,
  )
    .toFixed(1)
    .padStart(6)} ms | process median ${percentile(wall, 50).toFixed(0).padStart(4)} ms | ${String(
    first.modules,
  ).padStart(
    4,
  )} modules | Firestore ${first.firestore ? 'loaded' : 'not loaded'}, nodemailer ${first.nodemailer ? 'loaded' : 'not loaded'}`;
};

console.log(
  `\nCold start of functions/lib/functions/src/index.js, ${runs} fresh processes each (Node ${process.version})`,
);
console.log(`exports: ${(lazy[0] as Sample).exports.join(', ')}`);
console.log(row('lazy', lazy));
console.log(row('eager', eager));
const saved =
  percentile(
    eager.map((s) => s.ms),
    50,
  ) -
  percentile(
    lazy.map((s) => s.ms),
    50,
  );
const ratio =
  percentile(
    lazy.map((s) => s.ms),
    50,
  ) /
  percentile(
    eager.map((s) => s.ms),
    50,
  );
console.log(
  `\nlazy loading saves ${saved.toFixed(1)} ms per cold start (lazy takes ${(ratio * 100).toFixed(0)}% of eager)`,
);
if ((lazy[0] as Sample).firestore || (lazy[0] as Sample).nodemailer) {
  console.error('FAIL: the module loads Firestore or nodemailer at start-up');
  process.exitCode = 1;
}
