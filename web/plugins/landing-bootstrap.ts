import { createHash } from 'node:crypto';
import {
  CAPTURE_GLOBAL,
  CAPTURE_NOTICE_ATTRIBUTE,
  CAPTURE_SOURCE_ATTRIBUTE,
  CAPTURE_TIMEOUT_MS,
  CAPTURE_UNAVAILABLE_MESSAGE,
} from '../src/lib/signupCapture.ts';

/**
 * The one inline script of the prerendered landing page. The page paints and reads as static HTML; this
 * script decides when the app comes, and keeps every sign-up made before it does.
 *
 * - **On engagement.** The app (the entry module, which imports the rest) is requested on the first
 *   focus, pointer press, key press or touch inside a form or the header, or by a captured submit. A
 *   visitor who only reads runs no app code at all, so the main thread stays as quiet as static HTML.
 * - **Only the entry when idle.** Once the page has loaded and the browser is idle, the small entry module
 *   is fetched into the HTTP cache (rel=prefetch). The chunks it loads are not: measured in Lighthouse
 *   (docs/performance/README.md), prefetching them added about 80 ms of blocking time to a page nobody touched,
 *   which is the cost this loading model exists to avoid.
 * - **All at once.** Starting the app modulepreloads every chunk it always loads (data-preload), so on a slow
 *   link they arrive in one round trip instead of one per level of imports.
 * - **The backend when a sign-up is coming.** Typing in a sign-up field, or a captured submit, modulepreloads
 *   the chunks of the Firebase module (data-backend): fetched and compiled while the address is typed, not
 *   run (the app runs it when idle, or at the press; with App Check on, as the visitor types, so that its
 *   token is fetched before the press: web/src/lib/backend.ts, prepareSignup). Measured on the phone profile, waiting for the
 *   browser to be idle before even fetching them held 3 presses in 5 for 350 to 440 ms. Focus alone does not
 *   fetch them: those bytes would share a slow link with the app's own chunks.
 * - **Connections early.** Starting the app also preconnects to the origins a sign-up calls besides the page's
 *   own (data-preconnect: Firestore, App Check when on; the callables are on the page's origin, already
 *   connected; web/src/lib/settings.ts, backendOrigins), anonymous like the
 *   SDKs' fetches, so a phone sets up DNS, TCP and TLS (two or three round trips per origin) while the
 *   visitor types instead of after the press. Not on load: a reader opens no connection to them.
 * - **Captured submits.** A submit on a sign-up form the app does not handle yet is stopped (no
 *   navigation; React never sees it), its value queued for the app, the form marked busy and the app
 *   requested; the contract with the app is web/src/lib/signupCapture.ts. The browser validates before it
 *   fires `submit`, so an empty or malformed field never gets here.
 *
 * The Content-Security-Policy allows this script by the SHA-256 of its text, and attributes are not part
 * of that hash: the URLs, which change with every build, are read from the element's data attributes, so
 * the text and its hash stay the same. Change a character here (or a constant it is made from) and the
 * hash in firebase.json must change with it (the build fails until it does; landing-bootstrap.test.ts too).
 */
export const BOOTSTRAP_SCRIPT = [
  '(() => {',
  '  const { entry, preload, backend, preconnect } = document.currentScript.dataset;',
  "  const list = (urls) => (urls ?? '').split(' ').filter(Boolean);",
  `  const capture = (self.${CAPTURE_GLOBAL} ??= { pending: [], live: [] });`,
  '  const link = (rel, href) => {',
  "    const element = document.createElement('link');",
  '    element.rel = rel;',
  "    element.crossOrigin = '';",
  '    element.href = href;',
  '    document.head.append(element);',
  '  };',
  '  let started = false;',
  '  const start = () => {',
  '    if (started) return;',
  '    started = true;',
  "    for (const href of list(preconnect)) link('preconnect', href);",
  "    for (const href of list(preload)) link('modulepreload', href);",
  "    const script = document.createElement('script');",
  "    script.type = 'module';",
  "    script.crossOrigin = '';",
  '    script.src = entry;',
  '    document.head.append(script);',
  '  };',
  '  let backendRequested = false;',
  '  const requestBackend = () => {',
  '    if (backendRequested) return;',
  '    backendRequested = true;',
  "    for (const href of list(backend)) link('modulepreload', href);",
  '  };',
  '  const engage = (event) => {',
  "    if (event.target instanceof Element && event.target.closest('form, header')) start();",
  '  };',
  "  for (const type of ['focusin', 'pointerdown', 'keydown', 'touchstart'])",
  '    document.addEventListener(type, engage, { capture: true, passive: true });',
  "  document.addEventListener('input', (event) => {",
  `    if (event.target instanceof Element && event.target.closest('form[${CAPTURE_SOURCE_ATTRIBUTE}]')) {`,
  '      start();',
  '      requestBackend();',
  '    }',
  '  }, { capture: true, passive: true });',
  '  const warm = () => {',
  '    if (started) return;',
  "    link('prefetch', entry);",
  '  };',
  '  const whenIdle = () => (self.requestIdleCallback ? requestIdleCallback(warm) : setTimeout(warm, 1000));',
  "  if (document.readyState === 'complete') whenIdle();",
  "  else addEventListener('load', whenIdle, { once: true });",
  "  document.addEventListener('submit', (event) => {",
  '    const form = event.target;',
  `    const source = form.getAttribute('${CAPTURE_SOURCE_ATTRIBUTE}');`,
  '    if (!source || capture.live.includes(source)) return;',
  '    event.preventDefault();',
  '    event.stopImmediatePropagation();',
  '    if (capture.pending.some((signup) => signup.source === source)) return;',
  `    const field = form.querySelector('input[type="email"]');`,
  `    const button = form.querySelector('button[type="submit"]');`,
  `    const notice = form.querySelector('[${CAPTURE_NOTICE_ATTRIBUTE}]');`,
  '    const signup = { source, email: field.value };',
  '    capture.pending.push(signup);',
  "    form.setAttribute('aria-busy', 'true');",
  '    button.disabled = true;',
  "    notice.textContent = '';",
  '    start();',
  '    requestBackend();',
  '    setTimeout(() => {',
  '      const index = capture.pending.indexOf(signup);',
  '      if (index === -1) return;',
  '      capture.pending.splice(index, 1);',
  "      form.setAttribute('aria-busy', 'false');",
  '      button.disabled = false;',
  `      notice.textContent = ${JSON.stringify(CAPTURE_UNAVAILABLE_MESSAGE)};`,
  `    }, ${CAPTURE_TIMEOUT_MS});`,
  '  }, true);',
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
 * script when the visitor engages, and drops any modulepreload link (a request before the paint, and a
 * parse on the main thread). `preload` lists the chunks the entry always loads, modulepreloaded on start;
 * `backend` the chunks of the Firebase module, requested with a captured submit; `preconnect` the origins a
 * sign-up calls, preconnected on start.
 */
export function withBootstrap(
  html: string,
  preload: string[] = [],
  backend: string[] = [],
  preconnect: string[] = [],
): string {
  const scripts = [...html.matchAll(MODULE_SCRIPT)];
  if (scripts.length !== 1)
    throw new Error(
      `the built HTML should have one entry <script type="module" src>, found ${scripts.length}`,
    );
  const [tag, src] = scripts[0] as unknown as [string, string];
  for (const url of [src, ...preload, ...backend]) {
    if (/["&<>\s]/.test(url)) throw new Error(`unexpected characters in a script's URL: ${url}`);
  }
  for (const origin of preconnect) {
    if (!/^https?:\/\/[^/"&<>\s]+$/.test(origin))
      throw new Error(`not an origin to preconnect to: ${origin}`);
  }
  const preloadAttribute =
    (preload.length > 0 ? ` data-preload="${preload.join(' ')}"` : '') +
    (backend.length > 0 ? ` data-backend="${backend.join(' ')}"` : '') +
    (preconnect.length > 0 ? ` data-preconnect="${preconnect.join(' ')}"` : '');
  return html
    .replace(MODULE_PRELOAD, '')
    .replace(tag, () => `<script data-entry="${src}"${preloadAttribute}>${BOOTSTRAP_SCRIPT}</script>`);
}

/** The parts of an output chunk `chunksLoadedBy` reads (rolldown's OutputChunk has more). */
export interface BundleChunk {
  fileName: string;
  isEntry: boolean;
  imports: string[];
  dynamicImports: string[];
  facadeModuleId?: string | null;
}

/**
 * The chunk of the module `facade` (an absolute module id) and its static imports, transitively, as URLs
 * under `base`, minus those in `except`. Throws if no chunk has that module as its facade.
 */
export function chunksOfModule(
  chunks: BundleChunk[],
  facade: string,
  except: string[] = [],
  base = '/',
): string[] {
  const byName = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
  const root = chunks.find((chunk) => chunk.facadeModuleId === facade);
  if (!root) throw new Error(`no chunk is the facade of ${facade}: is it still imported dynamically?`);
  const found = new Set<string>();
  const pending = [root.fileName];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    const chunk = byName.get(name);
    if (!chunk || found.has(name)) continue;
    found.add(name);
    pending.push(...chunk.imports);
  }
  return [...found]
    .sort()
    .map((name) => `${base}${name}`)
    .filter((url) => !except.includes(url));
}

/**
 * The chunks the entry loads on the prerendered page, as URLs under `base`: its static imports, the module
 * it imports dynamically there (`loaded`, an absolute module id: the islands) and what that module itself
 * imports dynamically (the toast layer, loaded right after the forms), with their static imports,
 * transitively. The whole app, lazy routes and the Firebase module are left out: the landing page does
 * not need them to work.
 */
export function chunksLoadedBy(chunks: BundleChunk[], loaded: string, base = '/'): string[] {
  const byName = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
  const target = chunks.find((chunk) => chunk.facadeModuleId === loaded);
  if (!target) throw new Error(`no chunk is the facade of ${loaded}: is it still imported dynamically?`);
  const found = new Set<string>();
  const pending = [
    ...chunks.filter((chunk) => chunk.isEntry).flatMap((entry) => entry.imports),
    target.fileName,
    ...target.dynamicImports,
  ];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    const chunk = byName.get(name);
    if (!chunk || found.has(name) || chunk.isEntry) continue;
    found.add(name);
    pending.push(...chunk.imports);
  }
  return [...found].sort().map((name) => `${base}${name}`);
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
