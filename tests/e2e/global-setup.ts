// One stack for the whole browser suite: started before the first file, stopped after the last, leaving no
// process behind (the stop fails the run otherwise). Its addresses reach the tests through `inject('stack')`.
// With GOODY_E2E_APP_CHECK=1 it is the App Check run (support/app-check.ts): the site built with App Check, the
// callables enforcing it, and `inject('appCheck')` true.
//
// The stack runs in a copy of the repository's working tree (tests/stack/repo-copy.ts), made when the suite
// starts: its launcher builds the functions into the copy's functions/lib, so `npm test` can run the stack
// tests beside this suite without one stack's build rewriting the compiled functions another stack's
// emulator is loading.

import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { copyRepository } from '../stack/repo-copy.ts';
import { APP_CHECK_RUN_VARIABLE, APP_CHECK_STACK_ENV } from './support/app-check.ts';
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
    appCheck: boolean;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const appCheck = process.env[APP_CHECK_RUN_VARIABLE] === '1';
  project.provide('appCheck', appCheck);
  const running = runningStackFromEnv();
  if (running) {
    console.warn(
      `e2e: using the running stack at ${running.siteUrl}; its data and outbox are wiped between cases.`,
    );
    project.provide('stack', running);
    return undefined;
  }
  const logFile = path.join(repoRoot, 'tests', '.artifacts', `e2e-stack${appCheck ? '-app-check' : ''}.log`);
  const started = Date.now();
  const copy = copyRepository();
  // The admin suite presses Sync several times a minute: the wait between syncs is a unit test's to prove.
  let stack: RunningStack;
  try {
    stack = await startStack({
      logFile,
      root: copy.root,
      env: { GOODY_SYNC_MIN_INTERVAL_SECONDS: '0', ...(appCheck ? APP_CHECK_STACK_ENV : {}) },
    });
  } catch (error) {
    copy.remove();
    throw error;
  }
  console.log(
    `e2e: stack up at ${stack.info.siteUrl} in ${((Date.now() - started) / 1000).toFixed(0)} s${appCheck ? ', App Check on (debug provider)' : ''} (log: ${path.relative(repoRoot, logFile)})`,
  );
  project.provide('stack', stack.info);
  return async () => {
    const stopping = Date.now();
    try {
      await stack.stop();
    } finally {
      copy.remove();
    }
    console.log(
      `e2e: stack stopped, nothing left running, in ${((Date.now() - stopping) / 1000).toFixed(1)} s`,
    );
  };
}
