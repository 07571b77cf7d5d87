// Every relative link in README.md and the docs points at a file that exists. The README is the door and
// the docs link one another by path, so a moved or deleted file shows here rather than as a dead link.

import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The Markdown files whose links are checked: README.md, functions/README.md and every file under docs/. */
function markdownFiles(): string[] {
  const files = [path.join(repoRoot, 'README.md'), path.join(repoRoot, 'functions', 'README.md')];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.md')) files.push(full);
    }
  };
  walk(path.join(repoRoot, 'docs'));
  return files;
}

/** The relative links of one Markdown file (`[text](target)` and `![alt](target)`) whose target is missing. */
export function brokenLinks(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const broken: string[] = [];
  for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1] ?? '';
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    const filePart = decodeURIComponent(target.split('#')[0] ?? '');
    if (!existsSync(path.resolve(path.dirname(file), filePart))) broken.push(target);
  }
  return broken;
}

describe('links in the docs', () => {
  it('finds a link to a missing file, and passes one that exists', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'goody-docs-links-'));
    writeFileSync(path.join(dir, 'there.md'), '# there\n');
    const page = path.join(dir, 'page.md');
    writeFileSync(
      page,
      '[ok](there.md#a) [gone](gone.md) ![img](img/none.png) [web](https://example.com) [here](#top)\n',
    );
    expect(brokenLinks(page)).toEqual(['gone.md', 'img/none.png']);
  });

  it('every relative link in README.md and docs/ resolves to a file', () => {
    const files = markdownFiles();
    expect(files.length).toBeGreaterThan(5);
    const broken = files.flatMap((file) =>
      brokenLinks(file).map((target) => `${path.relative(repoRoot, file)}: ${target}`),
    );
    expect(broken).toEqual([]);
  });
});
