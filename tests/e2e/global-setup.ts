// One stack for the whole browser suite: started before the first file, stopped after the last, leaving no
// process behind (the stop fails the run otherwise). Its addresses reach the tests through `inject('stack')`.

import path from 'node:path';
import type { TestProject } from 'vitest/node';
import {
  type RunningStack,
  repoRoot,
  runningStackFromEnv,
  type StackInfo,
  startStack,
} from './support/stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    stack: StackInfo;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const running = runningStackFromEnv();
  if (running) {
    console.warn(
      `e2e: using the running stack at ${running.siteUrl}; its data and outbox are wiped between cases.`,
    );
    project.provide('stack', running);
    return undefined;
  }
  const logFile = path.join(repoRoot, 'tests', '.artifacts', 'e2e-stack.log');
  const started = Date.now();
  // The admin suite presses Sync several times a minute: the wait between syncs is a unit test's to prove.
  const stack: RunningStack = await startStack({ logFile, env: { GOODY_SYNC_MIN_INTERVAL_SECONDS: '0' } });
  console.log(
    `e2e: stack up at ${stack.info.siteUrl} in ${((Date.now() - started) / 1000).toFixed(0)} s (log: ${path.relative(repoRoot, logFile)})`,
  );
  project.provide('stack', stack.info);
  return async () => {
    const stopping = Date.now();
    await stack.stop();
    console.log(
      `e2e: stack stopped, nothing left running, in ${((Date.now() - stopping) / 1000).toFixed(1)} s`,
    );
  };
}
