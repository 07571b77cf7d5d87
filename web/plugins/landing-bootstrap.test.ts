// @vitest-environment node
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  CAPTURE_GLOBAL,
  CAPTURE_TIMEOUT_MS,
  CAPTURE_UNAVAILABLE_MESSAGE,
  type SignupCapture,
  takeOverSignupForm,
} from '../src/lib/signupCapture';
import {
  assertPolicyAllowsBootstrap,
  BOOTSTRAP_HASH_SOURCE,
  BOOTSTRAP_SCRIPT,
  chunksLoadedBy,
  chunksOfModule,
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
    <div id="root"><header><a href="#main">Skip</a></header><main id="main"><h1>Hello</h1>
      <form aria-busy="false" data-signup-source="hero_form"><input type="email" required aria-label="Email address"><button type="submit" class="MuiButton-root">Get Early Access</button><p aria-live="polite" data-signup-notice=""></p></form>
      <p id="text">Plain text</p>
      <form aria-busy="false" data-signup-source="final_cta"><input type="email" required aria-label="Email address"><button type="submit" class="MuiButton-root">Join the Club</button><p aria-live="polite" data-signup-notice=""></p></form>
      <form id="other"><input name="q"><button type="submit">Search</button></form>
    </main></div>
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
  it('replaces the entry script with the bootstrap carrying its URL and the chunks to preload on start, and drops modulepreload links', () => {
    const html = withBootstrap(built, ['/assets/react-xyz.js', '/assets/client-1.js']);
    expect(html).toContain(
      '<script data-entry="/assets/index-abc.js" data-preload="/assets/react-xyz.js /assets/client-1.js">' +
        `${BOOTSTRAP_SCRIPT}</script>`,
    );
    expect(html).not.toMatch(/<script[^>]*type="module"|<link[^>]*modulepreload/);
    expect(html).toContain('<div id="root"><header>');
    expect(withBootstrap(built)).toContain(
      `<script data-entry="/assets/index-abc.js">${BOOTSTRAP_SCRIPT}</script>`,
    );
    expect(() => withBootstrap(built, ['/assets/a b.js'])).toThrow(/unexpected characters/);
  });

  it('carries the origins a sign-up calls, to preconnect to on start, and refuses anything but an origin', () => {
    const origins = ['https://firestore.googleapis.com', 'http://[::1]:5001'];
    expect(withBootstrap(built, [], [], origins)).toContain(
      `<script data-entry="/assets/index-abc.js" data-preconnect="${origins.join(' ')}">`,
    );
    for (const bad of [
      'https://x.test/path',
      'javascript:alert(1)',
      'https://a" onload="x',
      'firestore.googleapis.com',
    ])
      expect(() => withBootstrap(built, [], [], [bad]), bad).toThrow(/not an origin/);
  });

  it('finds the chunks of the Firebase module, less those the app already loads', () => {
    const chunks = [
      { fileName: 'assets/index.js', isEntry: true, imports: [], dynamicImports: ['assets/islands.js'] },
      {
        fileName: 'assets/islands.js',
        isEntry: false,
        imports: ['assets/shared.js'],
        dynamicImports: [],
        facadeModuleId: '/web/src/app/islands.tsx',
      },
      {
        fileName: 'assets/firebase.js',
        isEntry: false,
        imports: ['assets/shared.js', 'assets/sdk.js'],
        dynamicImports: [],
        facadeModuleId: '/web/src/lib/firebase.ts',
      },
      { fileName: 'assets/shared.js', isEntry: false, imports: [], dynamicImports: [] },
      { fileName: 'assets/sdk.js', isEntry: false, imports: [], dynamicImports: [] },
    ];
    expect(
      chunksOfModule(chunks, '/web/src/lib/firebase.ts', chunksLoadedBy(chunks, '/web/src/app/islands.tsx')),
    ).toEqual(['/assets/firebase.js', '/assets/sdk.js']);
    expect(() => chunksOfModule(chunks, '/web/src/lib/missing.ts')).toThrow(/no chunk/);
  });

  it('preloads on start what the entry loads on the landing page: its static imports, the islands and the toast layer they import, with theirs; not the whole app, not lazy routes', () => {
    const chunk = (
      fileName: string,
      imports: string[] = [],
      dynamicImports: string[] = [],
      isEntry = false,
    ) => ({
      fileName,
      isEntry,
      imports,
      dynamicImports,
      facadeModuleId: `/web/src/${fileName.slice('assets/'.length, -'.js'.length)}`,
    });
    const chunks = [
      chunk(
        'assets/index.js',
        ['assets/preload-helper.js'],
        ['assets/client.js', 'assets/react-dom.js', 'assets/islands.js'],
        true,
      ),
      chunk('assets/preload-helper.js'),
      chunk(
        'assets/islands.js',
        ['assets/react.js', 'assets/react-dom.js', 'assets/SignupForm.js'],
        ['assets/ToastLayer.js'],
      ),
      chunk('assets/ToastLayer.js', ['assets/react.js']),
      chunk('assets/SignupForm.js', ['assets/react.js'], ['assets/firebase.js']),
      chunk(
        'assets/client.js',
        ['assets/react.js', 'assets/Button.js'],
        ['assets/AdminPage.js', 'assets/firebase.js'],
      ),
      chunk('assets/react-dom.js', ['assets/react.js']),
      chunk('assets/react.js'),
      chunk('assets/Button.js', ['assets/react.js']),
      chunk('assets/AdminPage.js', ['assets/Button.js']),
      chunk('assets/firebase.js'),
    ];
    expect(chunksLoadedBy(chunks, '/web/src/islands')).toEqual([
      '/assets/SignupForm.js',
      '/assets/ToastLayer.js',
      '/assets/islands.js',
      '/assets/preload-helper.js',
      '/assets/react-dom.js',
      '/assets/react.js',
    ]);
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
    options: {
      runScripts: 'dangerously';
      pretendToBeVisual: boolean;
      beforeParse: (window: Window & typeof globalThis) => void;
    },
  ) => { window: Window & typeof globalThis };
};

/**
 * The script itself, run by jsdom (which has no modules and no rel=prefetch: it only inserts the elements).
 * Its timers are a queue the test runs by hand, so the 12 s bound takes no time.
 */
const ORIGINS = ['https://firestore.googleapis.com', 'https://content-firebaseappcheck.googleapis.com'];

describe('the bootstrap script', () => {
  function load() {
    const timers: { at: number; run: () => void }[] = [];
    let now = 0;
    const dom = new JSDOM(withBootstrap(built, ['/assets/client-1.js'], ['/assets/firebase-1.js'], ORIGINS), {
      runScripts: 'dangerously',
      pretendToBeVisual: true,
      beforeParse(window) {
        const fakeSetTimeout = (run: () => void, delay = 0) => timers.push({ at: now + delay, run });
        Object.assign(window, { setTimeout: fakeSetTimeout, requestIdleCallback: undefined });
      },
    });
    const { window } = dom;
    const { document } = window;
    const advance = (ms: number) => {
      now += ms;
      for (
        let due = timers.find((timer) => timer.at <= now);
        due;
        due = timers.find((timer) => timer.at <= now)
      ) {
        timers.splice(timers.indexOf(due), 1);
        due.run();
      }
    };
    const entries = () =>
      Array.from(document.querySelectorAll('script[type="module"]'), (script) => script.getAttribute('src'));
    const links = (rel: string) =>
      Array.from(document.querySelectorAll(`link[rel="${rel}"]`), (link) => link.getAttribute('href'));
    const prefetched = () => links('prefetch');
    const preloaded = () => links('modulepreload');
    const preconnected = () =>
      Array.from(
        document.querySelectorAll('link[rel="preconnect"]'),
        (link) => `${link.getAttribute('href')} crossorigin=${link.getAttribute('crossorigin')}`,
      );
    const capture = () =>
      (window as unknown as Record<string, SignupCapture>)[CAPTURE_GLOBAL] as SignupCapture;
    const form = (source: 'hero_form' | 'final_cta') => {
      const element = document.querySelector(`form[data-signup-source="${source}"]`) as HTMLFormElement;
      const field = element.querySelector('input') as HTMLInputElement;
      const button = element.querySelector('button') as HTMLButtonElement;
      const notice = element.querySelector('[data-signup-notice]') as HTMLElement;
      /** The submit event as the browser fires it once its own validation has passed; true if not cancelled. */
      const submit = () =>
        element.dispatchEvent(new window.Event('submit', { bubbles: true, cancelable: true }));
      return { element, field, button, notice, submit };
    };
    const fire = (target: Element, type: string) =>
      target.dispatchEvent(new window.Event(type, { bubbles: true, cancelable: true }));
    return { window, document, advance, entries, prefetched, preloaded, preconnected, capture, form, fire };
  }

  /** A fresh page whose hero form got teen@example.com submitted before any app code ran: the script holds it. */
  function heroSubmittedBeforeTheApp() {
    const page = load();
    const hero = page.form('hero_form');
    hero.field.value = 'teen@example.com';
    hero.submit();
    return { page, hero };
  }

  it('runs no app code on load: the entry is not requested; once loaded and idle, only the entry is prefetched', () => {
    const page = load();
    expect(page.entries()).toEqual([]);
    expect(page.prefetched()).toEqual([]);
    page.window.dispatchEvent(new page.window.Event('load'));
    page.advance(999);
    expect(page.prefetched()).toEqual([]);
    page.advance(1);
    // Not the chunks it loads: prefetching those cost blocking time on a page nobody touched.
    expect(page.prefetched()).toEqual(['/assets/index-abc.js']);
    expect(page.preloaded()).toEqual([]);
    expect(page.entries()).toEqual([]);
    // A reader opens no connection to the backend.
    expect(page.preconnected()).toEqual([]);
    page.window.close();
  });

  it('requests the entry once, on the first focus, pointer, key or touch on a form or the header, and not elsewhere', () => {
    for (const [type, selector] of [
      ['focusin', 'input'],
      ['pointerdown', 'button'],
      ['keydown', 'input'],
      ['touchstart', 'form'],
      ['focusin', 'header a'],
    ] as const) {
      const page = load();
      const text = page.document.getElementById('text') as HTMLElement;
      for (const event of ['focusin', 'pointerdown', 'keydown', 'touchstart']) page.fire(text, event);
      page.fire(page.document.body, 'keydown');
      expect(page.entries(), `${type} outside`).toEqual([]);
      page.fire(page.document.querySelector(selector) as Element, type);
      page.fire(page.document.querySelector(selector) as Element, type);
      expect(page.entries(), `${type} on ${selector}`).toEqual(['/assets/index-abc.js']);
      // With the entry, everything it always loads, in parallel; not the Firebase module (no sign-up yet).
      expect(page.preloaded()).toEqual(['/assets/client-1.js']);
      // The connections a sign-up needs, set up while the visitor types; anonymous, as the SDKs fetch.
      expect(page.preconnected()).toEqual(ORIGINS.map((origin) => `${origin} crossorigin=`));
      page.window.close();
    }
  });

  it('fetches the Firebase chunks once the visitor types in a sign-up field, once, and not for typing elsewhere', () => {
    const page = load();
    const other = page.document.querySelector('#other input') as HTMLInputElement;
    page.fire(other, 'input');
    expect(page.preloaded()).toEqual([]);
    const hero = page.form('hero_form');
    page.fire(hero.field, 'focusin');
    expect(page.preloaded()).toEqual(['/assets/client-1.js']);
    for (const field of [hero.field, hero.field, page.form('final_cta').field]) page.fire(field, 'input');
    expect(page.preloaded()).toEqual(['/assets/client-1.js', '/assets/firebase-1.js']);
    expect(page.entries()).toEqual(['/assets/index-abc.js']);
    page.window.close();
  });

  it('captures a submit before the app: no navigation, React never sees it, the value queued, the form busy, the app requested', () => {
    const page = load();
    const hero = page.form('hero_form');
    hero.field.value = 'teen@example.com';
    let reachedTheApp = false;
    page.document.getElementById('root')?.addEventListener('submit', () => {
      reachedTheApp = true;
    });

    expect(hero.submit()).toBe(false);
    expect(reachedTheApp).toBe(false);
    expect(page.capture()).toEqual({
      pending: [{ source: 'hero_form', email: 'teen@example.com' }],
      live: [],
    });
    expect(hero.element.getAttribute('aria-busy')).toBe('true');
    expect(hero.button.disabled).toBe(true);
    expect(page.entries()).toEqual(['/assets/index-abc.js']);
    // The sign-up will need the Firebase module right after hydration: it is requested with the app.
    expect(page.preloaded()).toEqual(['/assets/client-1.js', '/assets/firebase-1.js']);
    expect(hero.field.value).toBe('teen@example.com');

    // A second press (or Enter) while it waits changes nothing; the other form is captured on its own.
    hero.field.value = 'changed@example.com';
    expect(hero.submit()).toBe(false);
    const final = page.form('final_cta');
    final.field.value = 'club@example.com';
    final.submit();
    expect(page.capture().pending).toEqual([
      { source: 'hero_form', email: 'teen@example.com' },
      { source: 'final_cta', email: 'club@example.com' },
    ]);
    expect(page.entries()).toEqual(['/assets/index-abc.js']);
    expect(page.preloaded()).toEqual(['/assets/client-1.js', '/assets/firebase-1.js']);

    // A form that is not a sign-up form is none of its business.
    const other = page.document.getElementById('other') as HTMLFormElement;
    expect(other.dispatchEvent(new page.window.Event('submit', { bubbles: true, cancelable: true }))).toBe(
      true,
    );
    page.window.close();
  });

  it('hands the app each captured submission exactly once, and leaves the submits of a live form to the app', () => {
    const { page, hero } = heroSubmittedBeforeTheApp();

    const first = takeOverSignupForm('hero_form', page.window);
    expect(first.captured).toEqual({ source: 'hero_form', email: 'teen@example.com' });
    expect(takeOverSignupForm('hero_form', page.window).captured).toBeUndefined();
    expect(page.capture()).toEqual({ pending: [], live: ['hero_form'] });

    // Live: the next submit goes to the app (not cancelled here; React's handler cancels it).
    let reachedTheApp = false;
    page.document.getElementById('root')?.addEventListener('submit', () => {
      reachedTheApp = true;
    });
    expect(hero.submit()).toBe(true);
    expect(reachedTheApp).toBe(true);
    expect(page.capture().pending).toEqual([]);

    // The bound passes: the submission is gone, so nothing is undone or said.
    page.advance(CAPTURE_TIMEOUT_MS);
    expect(hero.notice.textContent).toBe('');
    // Handed back (unmounted), the form is captured again.
    first.release();
    expect(hero.submit()).toBe(false);
    expect(page.capture().pending).toHaveLength(1);
    page.window.close();
  });

  it('tells the visitor plainly when the app has not come in time, keeps the value, and a late app sends nothing', () => {
    const { page, hero } = heroSubmittedBeforeTheApp();

    page.advance(CAPTURE_TIMEOUT_MS - 1);
    expect(hero.notice.textContent).toBe('');
    expect(hero.button.disabled).toBe(true);
    page.advance(1);
    expect(hero.notice.textContent).toBe(CAPTURE_UNAVAILABLE_MESSAGE);
    expect(hero.notice.getAttribute('aria-live')).toBe('polite');
    expect(hero.field.value).toBe('teen@example.com');
    expect(hero.element.getAttribute('aria-busy')).toBe('false');
    expect(hero.button.disabled).toBe(false);
    expect(page.capture().pending).toEqual([]);
    expect(takeOverSignupForm('hero_form', page.window).captured).toBeUndefined();
    page.window.close();
  });

  it('lets the visitor try again after the message: a new capture, the message cleared', () => {
    const { page, hero } = heroSubmittedBeforeTheApp();
    page.advance(CAPTURE_TIMEOUT_MS);
    expect(hero.notice.textContent).toBe(CAPTURE_UNAVAILABLE_MESSAGE);

    expect(hero.submit()).toBe(false);
    expect(hero.notice.textContent).toBe('');
    expect(hero.button.disabled).toBe(true);
    expect(takeOverSignupForm('hero_form', page.window).captured).toEqual({
      source: 'hero_form',
      email: 'teen@example.com',
    });
    page.window.close();
  });
});
