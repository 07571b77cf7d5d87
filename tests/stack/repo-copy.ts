// A copy of the repository's working tree for a test that edits sources (the functions, a landing section) and
// must never touch the repository's own: every file git tracks (or would, untracked but not ignored) of the
// packages the stack is made of, read from disk as they are now, with a node_modules of links into the
// repository's (its workspaces linked to the copy's). The launcher run inside it takes the copy as its root.

import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './launcher-process.ts';

/** What the stack is built and run from (the root files and the workspaces npm run dev uses). */
const PARTS = [
  'package.json',
  'firebase.json',
  'firestore.rules',
  'firestore.indexes.json',
  'tsconfig.base.json',
  'contract',
  'dev',
  'stand-ins',
  'functions',
  'web',
  // npm wants every workspace the root names; the tests' own files are not needed.
  'tests/package.json',
  'ops/package.json',
];

export interface RepoCopy {
  root: string;
  remove(): void;
}

/**
 * Copies the repository into a new directory under the system's temp dir (no dot-directory in its path, as the
 * Functions emulator's watcher needs: dev/stack.ts, STACKS_DIR).
 */
export function copyRepository(): RepoCopy {
  const root = mkdtempSync(path.join(os.tmpdir(), 'goody-repo-copy-'));
  const files = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...PARTS],
    { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  )
    .split('\0')
    .filter(Boolean);
  for (const file of new Set(files)) {
    const from = path.join(repoRoot, file);
    // Deleted in the working tree but still in the index.
    if (!existsSync(from)) continue;
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    copyFileSync(from, path.join(root, file));
  }

  const modules = path.join(root, 'node_modules');
  mkdirSync(modules);
  for (const entry of readdirSync(path.join(repoRoot, 'node_modules'))) {
    // Vite's caches are per project; the workspaces are the copy's own.
    if (entry === '.vite' || entry === '.vite-temp' || entry === '@goody') continue;
    symlinkSync(path.join(repoRoot, 'node_modules', entry), path.join(modules, entry));
  }
  mkdirSync(path.join(modules, '@goody'));
  for (const workspace of readdirSync(path.join(repoRoot, 'node_modules', '@goody'))) {
    symlinkSync(path.join('..', '..', workspace), path.join(modules, '@goody', workspace));
  }
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
