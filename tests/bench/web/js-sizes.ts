// The JavaScript a built site ships, split the way a browser meets it: the initial JavaScript (what the HTML
// references, with everything it imports statically, transitively) and the lazy rest (dynamic imports).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

export interface JsFigures {
  files: number;
  bytes: number;
  gzipBytes: number;
}

export interface JsSizes {
  initial: JsFigures & { names: string[] };
  lazy: JsFigures & { names: string[] };
}

// `<script src="/assets/x.js">`, `<link rel="modulepreload" href="/assets/x.js">`, and the landing page's
// inline bootstrap, `<script data-entry="/assets/x.js">`, which inserts that script when the visitor engages.
const HTML_REFERENCE = /<(?:script|link)\b[^>]*?\b(?:src|href|data-entry)="\/?(assets\/[^"]+\.js)"/g;
// Static imports in minified output: `import"./x.js"`, `import{a}from"./x.js"`, `export{a}from"./x.js"`.
// A dynamic `import("./x.js")` has a parenthesis and is not matched by this one.
const STATIC_IMPORT = /(?:\bimport\s*|\bfrom\s*)["'`]\.\/([^"'`]+\.js)["'`]/g;
const DYNAMIC_IMPORT = /\bimport\(\s*["'`]\.\/([^"'`]+\.js)["'`]\s*\)/g;

function figures(dir: string, names: string[]): JsFigures & { names: string[] } {
  let bytes = 0;
  let gzipBytes = 0;
  for (const name of names) {
    const code = readFileSync(path.join(dir, name));
    bytes += code.length;
    // Level 9, as the build's own report measures, so the two figures agree.
    gzipBytes += gzipSync(code, { level: 9 }).length;
  }
  return { files: names.length, bytes, gzipBytes, names: [...names].sort() };
}

/**
 * The initial JavaScript: what the HTML loads and all its static imports, plus, with `entryDefersApp`,
 * what the entry chunk loads when it runs and their static imports. That is our build: its entry chunk
 * is main.tsx alone, which on the landing page imports the islands (the chunks the bootstrap lists in
 * data-preload), elsewhere the whole app (the build's budget counts every route's at once,
 * web/plugins/initial-chunk-report.ts). In a classic build (the naive reference) the entry chunk is the
 * app, and its dynamic imports are lazy routes. Everything else is lazy.
 */
export function measureJs(distDir: string, options: { entryDefersApp: boolean }): JsSizes {
  const htmlFile = 'index.html';
  const assetsDir = path.join(distDir, 'assets');
  const all = readdirSync(assetsDir).filter((name) => name.endsWith('.js'));
  const html = readFileSync(path.join(distDir, htmlFile), 'utf8');
  const read = (name: string) => readFileSync(path.join(assetsDir, name), 'utf8');

  const initial = new Set<string>();
  const entries = [...html.matchAll(HTML_REFERENCE)].map((match) => path.basename(match[1] as string));
  // The landing page's bootstrap names what the entry loads there (the islands, data-preload); a page
  // without it loads whatever its entry imports dynamically.
  const preload = /\bdata-preload="([^"]*)"/.exec(html)?.[1];
  const deferred = !options.entryDefersApp
    ? []
    : preload !== undefined
      ? preload
          .split(' ')
          .filter(Boolean)
          .map((url) => path.basename(url))
      : entries.flatMap((name) =>
          [...read(name).matchAll(DYNAMIC_IMPORT)].map((match) => path.basename(match[1] as string)),
        );
  const pending = [...entries, ...deferred];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (initial.has(name)) continue;
    initial.add(name);
    for (const match of read(name).matchAll(STATIC_IMPORT)) pending.push(path.basename(match[1] as string));
  }
  if (initial.size === 0) throw new Error(`${htmlFile} in ${distDir} references no script`);

  return {
    initial: figures(assetsDir, [...initial]),
    lazy: figures(
      assetsDir,
      all.filter((name) => !initial.has(name)),
    ),
  };
}
