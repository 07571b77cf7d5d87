// What a local stack is, for the launcher and for whatever drives one (the stack tests, the browser suite, the
// benches): where it keeps its files, and the two dummy keys it runs with. Nothing here starts anything.

import path from 'node:path';

/**
 * Where a stack's generated files go: inside the repository (firebase-tools resolves firebase-functions from the
 * functions directory upwards), and under no dot-directory: the Functions emulator's file watcher ignores every
 * path with a segment starting with a dot (firebase/firebase-tools#10187).
 */
export const STACKS_DIR = 'dev-stacks';

export function stackDirFor(root: string, pagePort: number): string {
  return path.join(root, STACKS_DIR, `stack-${pagePort}`);
}

/** The local stack's two keys: dummies (a deploy uses Secret Manager secrets), for benchmarks too. */
export const DEV_MAILBOX_KEY_SECRET = 'dev-mailbox-key-secret-not-for-production';
export const DEV_UNSUBSCRIBE_SECRET = 'dev-unsubscribe-secret-not-for-production';
