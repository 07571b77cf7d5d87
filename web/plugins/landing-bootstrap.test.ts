// @vitest-environment node
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  assertPolicyAllowsBootstrap,
  BOOTSTRAP_HASH_SOURCE,
  BOOTSTRAP_SCRIPT,
  hostingScriptSources,
  scriptHashSource,
  withBootstrap,
} from './landing-bootstrap';

const firebaseJson = readFileSync(new URL('../../firebase.json', import.meta.url), 'utf8');

const built = `<!doctype html>
<html lang="en">
  <head>
    <title>GOODY</title>
    <script type="module" crossorigin src="/assets/index-abc.js"></script>
    <link rel="modulepreload" crossorigin href="/assets/react-xyz.js">
  </head>
  <body>
    <div id="root"><main><h1>Hello</h1></main></div>
  </body>
</html>
`;

function policyWith(scriptSrc: string): string {
  return JSON.stringify({
    hosting: {
      headers: [
        {
          source: '**',
          headers: [{ key: 'Content-Security-Policy', value: `default-src 'self'; script-src ${scriptSrc}` }],
        },
      ],
    },
  });
}

describe('the landing page bootstrap and the Content-Security-Policy', () => {
  it("is allowed by firebase.json's policy: script-src is 'self' and exactly its hash", () => {
    expect(hostingScriptSources(firebaseJson)).toEqual([["'self'", BOOTSTRAP_HASH_SOURCE]]);
    expect(() => assertPolicyAllowsBootstrap(firebaseJson)).not.toThrow();
  });

  it('computes hashes as browsers do (the CSP spec example: SHA-256 of the UTF-8 text, base64)', () => {
    expect(scriptHashSource("alert('Hello, world.');")).toBe(
      "'sha256-qznLcsROx4GACP2dm0UCKCzCG+HiZ1guq6ZZDob/Tng='",
    );
    expect(BOOTSTRAP_HASH_SOURCE).toBe(scriptHashSource(BOOTSTRAP_SCRIPT));
  });

  it('refuses a policy without the hash, with another hash, or without any policy', () => {
    expect(() => assertPolicyAllowsBootstrap(policyWith("'self'"))).toThrow(/would block/);
    expect(() =>
      assertPolicyAllowsBootstrap(policyWith(`'self' ${scriptHashSource(`${BOOTSTRAP_SCRIPT} `)}`)),
    ).toThrow(/would block/);
    expect(() => assertPolicyAllowsBootstrap(policyWith(`'self' ${BOOTSTRAP_HASH_SOURCE}`))).not.toThrow();
    expect(() => assertPolicyAllowsBootstrap(JSON.stringify({ hosting: { headers: [] } }))).toThrow(
      /no Content-Security-Policy/,
    );
  });
});

describe('withBootstrap', () => {
  it('replaces the entry script with the bootstrap carrying its URL, and drops modulepreload links', () => {
    const html = withBootstrap(built);
    expect(html).toContain(`<script data-entry="/assets/index-abc.js">${BOOTSTRAP_SCRIPT}</script>`);
    expect(html).not.toMatch(/type="module"|modulepreload|\/assets\/react-xyz\.js/);
    expect(html).toContain('<div id="root"><main><h1>Hello</h1></main></div>');
  });

  it('refuses HTML without exactly one entry script', () => {
    expect(() => withBootstrap(built.replace(/<script [^>]*><\/script>/, ''))).toThrow(/found 0/);
    const twice = built.replace('</head>', '<script type="module" src="/assets/b.js"></script></head>');
    expect(() => withBootstrap(twice)).toThrow(/found 2/);
  });
});

// jsdom ships no type declarations; this is the little of its API used here.
const { JSDOM } = createRequire(import.meta.url)('jsdom') as {
  JSDOM: new (
    html: string,
    options: { runScripts: 'dangerously'; pretendToBeVisual: boolean },
  ) => { window: Window & typeof globalThis };
};

// The script itself, run by jsdom (which has neither paint timing nor modules: it only inserts the element).
describe('the bootstrap script', () => {
  function load(visual: boolean) {
    const dom = new JSDOM(withBootstrap(built), { runScripts: 'dangerously', pretendToBeVisual: visual });
    const entries = () =>
      Array.from(dom.window.document.querySelectorAll('script[type="module"]'), (script) =>
        script.getAttribute('src'),
      );
    return { dom, entries };
  }

  it('inserts the entry module once the page has painted (a frame, then a task)', async () => {
    const { dom, entries } = load(true);
    expect(dom.window.document.visibilityState).toBe('visible');
    expect(entries()).toEqual([]);
    await new Promise((resolve) => dom.window.requestAnimationFrame(() => dom.window.setTimeout(resolve, 0)));
    expect(entries()).toEqual(['/assets/index-abc.js']);
    dom.window.close();
  });

  it('inserts it at once in a page that is not visible (which paints nothing until shown)', () => {
    const { dom, entries } = load(false);
    expect(dom.window.document.visibilityState).not.toBe('visible');
    expect(entries()).toEqual(['/assets/index-abc.js']);
    dom.window.close();
  });
});
