// @vitest-environment node
/**
 * The initial JavaScript must not contain the Firebase SDKs (docs/architecture.md, Web). This walks the
 * import graph the landing page always loads once the visitor engages: the entry, main.tsx, the app it
 * imports (its own dynamic imports), and everything those import statically. It fails if it reaches
 * `firebase/*` or the module that initialises Firebase. Dynamic `import()` below the entry is where
 * the graph is allowed to split. (The build's own report in plugins/initial-chunk-report.ts checks the
 * real output the same way.)
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const srcDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Static `import ... from 'x'` and `export ... from 'x'`; `import type` is erased by the compiler. */
const STATIC_IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function resolveLocal(specifier: string, fromFile: string): string | null {
  const base = specifier.startsWith('@/')
    ? resolve(srcDir, specifier.slice(2))
    : specifier.startsWith('.')
      ? resolve(dirname(fromFile), specifier)
      : null;
  if (!base) return null;
  const candidates = [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`];
  const found = candidates.find((candidate) => statSync(candidate, { throwIfNoEntry: false })?.isFile());
  if (found) return found;
  throw new Error(`cannot resolve ${specifier} from ${fromFile}`);
}

function initialGraph(entry: string) {
  const files = new Set<string>();
  const packages = new Map<string, string>();
  const deferred = [...readFileSync(entry, 'utf8').matchAll(DYNAMIC_IMPORT)].flatMap(
    ([, specifier = '']) => resolveLocal(specifier, entry) ?? [],
  );
  const pending = [entry, ...deferred];
  for (let file = pending.pop(); file; file = pending.pop()) {
    if (files.has(file)) continue;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    for (const [, specifier = ''] of source.matchAll(STATIC_IMPORT)) {
      const local = resolveLocal(specifier, file);
      if (local) pending.push(local);
      else packages.set(specifier, file);
    }
  }
  return { files, packages };
}

describe('initial module graph', () => {
  const { files, packages } = initialGraph(resolve(srcDir, 'app/main.tsx'));

  it('is found (sanity check: the walk reaches the landing page and the sign-up form)', () => {
    expect(files).toContain(resolve(srcDir, 'pages/landing/LandingPage.tsx'));
    expect(files).toContain(resolve(srcDir, 'features/signup/SignupForm.tsx'));
    expect(files).toContain(resolve(srcDir, 'lib/backend.ts'));
    expect(files).toContain(resolve(srcDir, 'app/client.tsx'));
    expect(packages.has('react-dom/client')).toBe(true);
  });

  it('imports no Firebase package statically', () => {
    const firebase = [...packages].filter(([name]) => /^(firebase|@firebase)(\/|$)/.test(name));
    expect(firebase).toEqual([]);
  });

  it('does not statically import the module that initialises Firebase', () => {
    expect(files).not.toContain(resolve(srcDir, 'lib/firebase.ts'));
  });

  it('keeps the admin and not-found pages out of it (they are lazy routes)', () => {
    expect(files).not.toContain(resolve(srcDir, 'pages/admin/AdminPage.tsx'));
    expect(files).not.toContain(resolve(srcDir, 'pages/not-found/NotFoundPage.tsx'));
  });
});

describe("the landing page's islands (what a visitor's first focus waits for)", () => {
  const { files, packages } = initialGraph(resolve(srcDir, 'app/islands.tsx'));

  it('hydrate the sign-up form and the toast layer', () => {
    expect(files).toContain(resolve(srcDir, 'features/signup/SignupForm.tsx'));
    expect(files).toContain(resolve(srcDir, 'lib/toast/ToastProvider.tsx'));
    expect(packages.has('react-dom/client')).toBe(true);
  });

  it('carry no MUI, no Emotion, no router and not the rest of the page', () => {
    const heavy = [...packages.keys()].filter((name) => /^(@mui\/|@emotion\/|react-router)/.test(name));
    expect(heavy).toEqual([]);
    expect(files).not.toContain(resolve(srcDir, 'pages/landing/LandingPage.tsx'));
    expect(files).not.toContain(resolve(srcDir, 'app/App.tsx'));
  });
});
