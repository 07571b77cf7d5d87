import { createHash } from 'node:crypto';

/**
 * The one inline script of the prerendered landing page. It requests the entry module only once the page
 * has painted, so no script is fetched before the first paint: a script the HTML references is fetched
 * at once, and Lighthouse's simulation (Lantern) then puts its round trip on the path to the first paint
 * even though module scripts never block rendering.
 *
 * The Content-Security-Policy allows this script by the SHA-256 of its text, and attributes are not part
 * of that hash: the entry's URL, which changes with every build, is read from the element's data-entry
 * attribute, so the text and its hash stay the same. Change a character here and the hash in
 * firebase.json must change with it (the build fails until it does; landing-bootstrap.test.ts too).
 *
 * It mirrors web/src/app/main.tsx's own wait for the first paint: a background tab paints nothing until it
 * is shown, so the app starts at once there; a paint that goes unreported starts it after 3 s.
 */
export const BOOTSTRAP_SCRIPT = [
  '(() => {',
  '  const entry = document.currentScript.dataset.entry;',
  '  let started = false;',
  '  const start = () => {',
  '    if (started) return;',
  '    started = true;',
  "    const script = document.createElement('script');",
  "    script.type = 'module';",
  "    script.crossOrigin = '';",
  '    script.src = entry;',
  '    document.head.append(script);',
  '  };',
  "  if (document.visibilityState !== 'visible') {",
  '    start();',
  "  } else if (self.PerformanceObserver?.supportedEntryTypes?.includes('paint')) {",
  '    new PerformanceObserver((list, observer) => {',
  "      if (list.getEntriesByName('first-contentful-paint').length === 0) return;",
  '      observer.disconnect();',
  '      start();',
  "    }).observe({ type: 'paint', buffered: true });",
  '    setTimeout(start, 3000);',
  '  } else {',
  '    requestAnimationFrame(() => setTimeout(start, 0));',
  '  }',
  '})();',
].join('\n');

/** A CSP hash-source for an inline script's text, as browsers compute it (UTF-8, SHA-256, base64). */
export function scriptHashSource(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

export const BOOTSTRAP_HASH_SOURCE = scriptHashSource(BOOTSTRAP_SCRIPT);

const MODULE_SCRIPT = /<script\b[^>]*\btype="module"[^>]*\bsrc="([^"]+)"[^>]*><\/script>/g;
const MODULE_PRELOAD = /\s*<link\b[^>]*\brel="modulepreload"[^>]*>/g;

/**
 * Replaces the entry <script type="module" src> Vite wrote with the bootstrap, which inserts the same
 * script after the first paint, and drops any modulepreload link (a request before the paint, too).
 */
export function withBootstrap(html: string): string {
  const scripts = [...html.matchAll(MODULE_SCRIPT)];
  if (scripts.length !== 1)
    throw new Error(
      `the built HTML should have one entry <script type="module" src>, found ${scripts.length}`,
    );
  const [tag, src] = scripts[0] as unknown as [string, string];
  if (/["&<>]/.test(src)) throw new Error(`unexpected characters in the entry's URL: ${src}`);
  return html
    .replace(MODULE_PRELOAD, '')
    .replace(tag, () => `<script data-entry="${src}">${BOOTSTRAP_SCRIPT}</script>`);
}

interface HeaderRule {
  source?: unknown;
  headers?: Array<{ key?: unknown; value?: unknown }>;
}

/**
 * The script-src sources of every Content-Security-Policy in a firebase.json's hosting headers. Throws if
 * there is none: a policy that does not mention scripts is one this page was not built for.
 */
export function hostingScriptSources(firebaseJson: string): string[][] {
  const config = JSON.parse(firebaseJson) as { hosting?: unknown };
  const sites = (Array.isArray(config.hosting) ? config.hosting : [config.hosting]) as Array<{
    headers?: HeaderRule[];
  }>;
  const policies = sites
    .flatMap((site) => site?.headers ?? [])
    .flatMap((rule) => rule.headers ?? [])
    .filter((header) => String(header.key).toLowerCase() === 'content-security-policy')
    .map((header) => String(header.value));
  if (policies.length === 0) throw new Error('firebase.json has no Content-Security-Policy header');
  return policies.map((policy) => {
    const directive = policy
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .find(([name]) => name?.toLowerCase() === 'script-src');
    if (!directive)
      throw new Error(`a Content-Security-Policy in firebase.json has no script-src: ${policy}`);
    return directive.slice(1);
  });
}

/** Throws unless every Content-Security-Policy in the firebase.json allows the bootstrap by its hash. */
export function assertPolicyAllowsBootstrap(firebaseJson: string): void {
  for (const sources of hostingScriptSources(firebaseJson)) {
    if (!sources.includes(BOOTSTRAP_HASH_SOURCE))
      throw new Error(
        `firebase.json's Content-Security-Policy would block the landing page's bootstrap script: ` +
          `script-src is "${sources.join(' ')}"; it needs ${BOOTSTRAP_HASH_SOURCE} ` +
          '(web/plugins/landing-bootstrap.ts; the hash changes with every character of the script)',
      );
  }
}
