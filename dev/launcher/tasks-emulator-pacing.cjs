// Preloaded into firebase-tools by the launcher (node --require), beside parent-watch.cjs: makes the Cloud Tasks
// emulator dispatch a queue at its rate when the rate is not a whole number, as Cloud Tasks does.
//
// The emulator (firebase-tools lib/emulator/taskQueue.js) keeps a token bucket per queue, adds `rate` tokens once
// a second and caps the bucket at `rate` tokens. A dispatch takes a whole token, so the fraction left after a
// second's dispatches is cut off by the next refill: a queue of 115 a minute (1.92 a second, deliver-contact's
// MailerLite pace) dispatches 1 a second, 60 a minute, and 7.67 a second dispatches 7. A bucket of `rate + 1`
// never cuts a leftover below one token, so the dispatches average out to the rate. Everything else about the
// queue (concurrency, retries, backoff, deduplication) stays the emulator's own.
//
// If a firebase-tools upgrade changes the class, this says so on stderr and changes nothing. Plain CommonJS
// because it runs before any loader; the logic is `pacedBucket`, tested in tasks-emulator-pacing.test.ts.
'use strict';

const path = require('node:path');

/** The bucket size that lets a queue dispatch `rate` tasks a second on average under once-a-second refills. */
function pacedBucket(rate, emulatorBucket) {
  return Math.max(emulatorBucket, rate + 1);
}

/** Wraps TaskQueue.prototype.refillTokens; returns false if the class is not the one this was written for. */
function correctPacing(TaskQueue) {
  const refill = TaskQueue?.prototype?.refillTokens;
  if (typeof refill !== 'function' || refill.goodyPaced) return false;
  const paced = function refillTokens() {
    const rate = this.config?.rateLimits?.maxDispatchesPerSecond;
    if (typeof rate === 'number' && typeof this.maxTokens === 'number') {
      this.maxTokens = pacedBucket(rate, this.maxTokens);
    }
    return refill.call(this);
  };
  paced.goodyPaced = true;
  TaskQueue.prototype.refillTokens = paced;
  return true;
}

module.exports = { pacedBucket, correctPacing };

// Only as a preload (the launcher passes this file to --require), where GOODY_TASKS_EMULATOR_PACING=off
// leaves the emulator as it ships (to measure it); a test that imports the functions changes nothing.
if (process.execArgv.includes(__filename) && process.env.GOODY_TASKS_EMULATOR_PACING !== 'off') {
  let TaskQueue;
  try {
    const root = path.dirname(require.resolve('firebase-tools/package.json'));
    ({ TaskQueue } = require(path.join(root, 'lib', 'emulator', 'taskQueue.js')));
  } catch {
    TaskQueue = undefined;
  }
  if (!correctPacing(TaskQueue)) {
    process.stderr.write(
      '[tasks-emulator-pacing] firebase-tools has no TaskQueue.refillTokens where expected: the Cloud Tasks ' +
        'emulator keeps its own pacing (a fractional rate dispatches at its whole part).\n',
    );
  }
}
