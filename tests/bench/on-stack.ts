// A bench run on a stack of its own: started on free ports with `env` added (its output kept in
// tests/.artifacts/bench-<bench>-stack.log), stopped whatever happens, and the process's exit: 1 if the bench
// failed, called `missed()` (a goal not met) or the stack would not stop, else 0.

import path from 'node:path';
import { type RunningStack, startStack } from '../e2e/support/stack.ts';
import { repoRoot } from './paths.ts';

export async function benchOnStack(
  bench: string,
  env: Record<string, string>,
  body: (stack: RunningStack, missed: () => void) => Promise<void>,
): Promise<never> {
  let exitCode = 0;
  let stack: RunningStack | undefined;
  try {
    stack = await startStack({
      logFile: path.join(repoRoot, 'tests', '.artifacts', `bench-${bench}-stack.log`),
      env,
    });
    await body(stack, () => {
      exitCode = 1;
    });
  } catch (error) {
    console.error(`bench:${bench} failed:`, error);
    exitCode = 1;
  } finally {
    await stack?.stop().catch((error: unknown) => {
      console.error(`bench:${bench}: stopping the stack:`, error);
      exitCode = 1;
    });
  }
  process.exit(exitCode);
}
