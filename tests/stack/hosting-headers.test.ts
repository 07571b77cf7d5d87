// The security and caching headers firebase.json gives Firebase Hosting: checked as configuration, as served
// by superstatic (the engine firebase-tools' Hosting emulator runs), and, where a Chromium is installed, as a
// browser reads them (no parse warnings, and the page's own way of styling still works under the policy).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { CALLABLES } from '@goody/contract';
import { deleteApp } from 'firebase/app';
import { setLogLevel } from 'firebase/firestore/lite';
import { httpsCallable, httpsCallableFromURL } from 'firebase/functions';
import { chromium as playwrightChromium } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { BOOTSTRAP_SCRIPT } from '../../web/plugins/landing-bootstrap.ts';
import { callablePath, readFirebaseSettings, SITE_CALLABLES } from '../../web/src/lib/config.ts';
import {
  addSignup,
  firebaseApp,
  firebaseServices,
  readHealthDocument,
} from '../../web/src/lib/firebase-client.ts';
import { chromiumArgs, findChromium } from '../e2e/chromium.ts';
import { type ServedSite, serveLikeHostingEmulator } from './hosting-emulator.ts';

interface HeaderRule {
  source: string;
  headers: Array<{ key: string; value: string }>;
}

const firebaseJsonPath = new URL('../../firebase.json', import.meta.url);
const firebaseJson = JSON.parse(readFileSync(firebaseJsonPath, 'utf8')) as {
  hosting: Record<string, unknown> & { headers: HeaderRule[] };
};
const hosting = firebaseJson.hosting;

function ruleFor(source: string): Map<string, string> {
  const rule = hosting.headers.find((candidate) => candidate.source === source);
  if (!rule) throw new Error(`firebase.json hosting.headers has no rule for ${source}`);
  return new Map(rule.headers.map(({ key, value }) => [key.toLowerCase(), value]));
}

const everyResponse = ruleFor('**');
const cspValue = everyResponse.get('content-security-policy') ?? '';

// ---- Content-Security-Policy grammar (CSP Level 3, section 2.3) -------------------------------------------

type Policy = Map<string, string[]>;

function parsePolicy(value: string): Policy {
  const policy: Policy = new Map();
  for (const part of value.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/).filter(Boolean);
    if (name === undefined) continue;
    const directive = name.toLowerCase();
    // Browsers keep the first of two same-named directives and ignore the second: always a mistake.
    if (policy.has(directive)) throw new Error(`directive ${directive} appears twice`);
    policy.set(directive, sources);
  }
  return policy;
}

const KEYWORDS = new Set([
  "'self'",
  "'none'",
  "'unsafe-inline'",
  "'unsafe-eval'",
  "'wasm-unsafe-eval'",
  "'unsafe-hashes'",
  "'strict-dynamic'",
  "'report-sample'",
]);
const SCHEME_SOURCE = /^[a-z][a-z0-9+.-]*:$/i;
// host-source: [scheme "://"] host [":" port] [path]; a wildcard only as the whole host or its leftmost label.
const HOST_SOURCE =
  /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:\*|(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*)(?::(?:[0-9]+|\*))?(?:\/[^\s;,]*)?$/i;

// hash-source: "'" hash-algorithm "-" base64-value "'"; a SHA-256 digest is 43 characters and one "=".
const HASH_SOURCE = /^'sha(?:256-[A-Za-z0-9+/]{43}=|384-[A-Za-z0-9+/]{64}|512-[A-Za-z0-9+/]{86}==)'$/;

function isValidSource(source: string): boolean {
  return (
    KEYWORDS.has(source) || SCHEME_SOURCE.test(source) || HOST_SOURCE.test(source) || HASH_SOURCE.test(source)
  );
}

// The URL-matching half of CSP (section 6.7.2.8), for the host-sources this policy uses.
function sourceAllows(source: string, url: URL, self: URL): boolean {
  if (source === "'self'") return url.origin === self.origin;
  const match = /^(?:([a-z][a-z0-9+.-]*):\/\/)?(\*|(?:\*\.)?[a-z0-9.-]+)(?::([0-9]+|\*))?$/i.exec(source);
  if (!match) return false;
  const [, scheme, host = '', port] = match;
  if (scheme && `${scheme.toLowerCase()}:` !== url.protocol) return false;
  if (!scheme && url.protocol !== self.protocol) return false;
  if (host !== '*') {
    const wanted = host.toLowerCase();
    const matchesHost = wanted.startsWith('*.')
      ? url.hostname.endsWith(wanted.slice(1))
      : url.hostname === wanted;
    if (!matchesHost) return false;
  }
  return port === undefined ? url.port === '' : port === '*' || url.port === port;
}

const SITE = new URL('https://demo-goody.web.app/');

describe('firebase.json hosting headers: configuration', () => {
  it('is a firebase.json that firebase-tools accepts (its own JSON schema)', () => {
    const require = createRequire(import.meta.url);
    const { getValidator, getErrorMessage } = require('firebase-tools/lib/firebaseConfigValidate.js') as {
      getValidator: () => ((data: unknown) => boolean) & { errors?: unknown[] | null };
      getErrorMessage: (error: unknown) => string;
    };
    const validate = getValidator();
    const valid = validate(firebaseJson);
    expect((validate.errors ?? []).map(getErrorMessage)).toEqual([]);
    expect(valid).toBe(true);
  });

  it('keeps the public directory, and rewrites every path but the hashed assets and the callables to the app shell', () => {
    expect(hosting.public).toBe('web/dist');
    // The two sign-up callables on the site's own origin (callable-rewrites.test.ts checks them against the
    // functions); then index.html is the prerendered landing page, the other routes render on the client
    // from the shell.
    expect((hosting.rewrites as Array<{ source: string }>).map((rewrite) => rewrite.source)).toEqual([
      '/api/add-contact-to-mailerlite',
      '/api/send-thank-you-email',
      '!/assets/**',
    ]);
    expect((hosting.rewrites as unknown[]).at(-1)).toEqual({
      source: '!/assets/**',
      destination: '/shell.html',
    });
  });

  it('sends every security header on every response ("**")', () => {
    expect(
      Object.fromEntries([...everyResponse].filter(([key]) => key !== 'content-security-policy')),
    ).toEqual({
      'strict-transport-security': 'max-age=63072000; includeSubDomains; preload',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'strict-origin-when-cross-origin',
      'permissions-policy':
        'camera=(), microphone=(), geolocation=(), payment=(), usb=(), interest-cohort=(), browsing-topics=()',
      'cross-origin-opener-policy': 'same-origin',
      'cache-control': 'no-cache',
    });
  });

  it('has a Content-Security-Policy whose directives and sources all parse', () => {
    const policy = parsePolicy(cspValue);
    for (const [directive, sources] of policy) {
      expect(directive).toMatch(/^[a-z0-9-]+$/);
      for (const source of sources)
        expect({ directive, source, valid: isValidSource(source) }).toMatchObject({ valid: true });
      if (sources.includes("'none'"))
        expect({ directive, sources }).toEqual({ directive, sources: ["'none'"] });
    }
  });

  it("allows exactly what the page uses: its own origin (files and the sign-up callables), Firestore, and the sync's function host", () => {
    expect(Object.fromEntries(parsePolicy(cspValue))).toEqual({
      'default-src': ["'self'"],
      // The one inline script allowed is the prerendered landing page's bootstrap, by the hash of its text
      // (web/plugins/landing-bootstrap.ts; the build and that file's test check the hash matches it).
      'script-src': ["'self'", "'sha256-8E/c/dYvOZZBIP9bx9SXLNnGfv+tGq7Xi3/9AGmyiNo='"],
      // Emotion (MUI's styling engine) writes <style> elements at run time; without 'unsafe-inline' the
      // browser refuses them and the page renders unstyled. Static hosting cannot mint per-response nonces.
      'style-src': ["'self'", "'unsafe-inline'"],
      'img-src': ["'self'", 'data:'],
      'font-src': ["'self'"],
      // The sign-up callables are 'self' (Hosting rewrites them to their functions); the function host is
      // there for the admin's sync, which outlives Hosting's 60 s limit on a rewritten request.
      'connect-src': ["'self'", 'https://firestore.googleapis.com', 'https://*.cloudfunctions.net'],
      'object-src': ["'none'"],
      'base-uri': ["'self'"],
      'form-action': ["'self'"],
      'frame-ancestors': ["'none'"],
      'upgrade-insecure-requests': [],
    });
  });

  it('never allows eval, inline scripts, plain http:, loopback, or any host at all', () => {
    const policy = parsePolicy(cspValue);
    const all = [...policy.entries()].flatMap(([directive, sources]) =>
      sources.map((source) => ({ directive, source })),
    );
    expect(all.filter(({ source }) => /unsafe-eval/.test(source))).toEqual([]);
    expect(policy.get('script-src')).not.toContain("'unsafe-inline'");
    expect(policy.get('script-src')).not.toContain("'unsafe-hashes'");
    expect(policy.get('script-src')).not.toContain("'strict-dynamic'");
    expect(all.filter(({ source }) => /^(?:http|ws):/i.test(source))).toEqual([]);
    expect(all.filter(({ source }) => /127\.0\.0\.1|localhost|\[::1\]/i.test(source))).toEqual([]);
    expect(all.filter(({ source }) => source === '*' || /^(?:https?:)$/i.test(source))).toEqual([]);
    expect(all.filter(({ directive, source }) => source === 'data:' && directive !== 'img-src')).toEqual([]);
  });

  describe('connect-src against the URLs the web SDKs really call in production', () => {
    const calls: string[] = [];

    afterEach(() => {
      vi.unstubAllGlobals();
      calls.length = 0;
    });

    it("allows Firestore Lite (connection test and insert), the sign-up callables on the site's origin and the sync on its host, and nothing else is called", async () => {
      vi.stubGlobal('fetch', async (input: string | URL | Request) => {
        calls.push(input instanceof Request ? input.url : String(input));
        return new Response('{}', { status: 503, headers: { 'content-type': 'application/json' } });
      });
      // A real project's settings (no emulators), and the page's own client.
      const settings = readFirebaseSettings({
        VITE_FIREBASE_PROJECT_ID: 'demo-goody',
        VITE_USE_EMULATORS: 'false',
        VITE_FIREBASE_API_KEY: 'test-api-key',
        VITE_FIREBASE_APP_ID: '1:1:web:1',
      });
      const app = firebaseApp(settings, 'csp-check');
      try {
        const { firestore, functions } = firebaseServices(app, settings);
        await Promise.allSettled([
          readHealthDocument(firestore),
          addSignup(firestore, {
            email: 'teen@example.com',
            subscription_type: 'updates',
            source: 'hero_form',
          }),
          // As web/src/lib/firebase.ts calls them.
          ...SITE_CALLABLES.map((name) =>
            httpsCallableFromURL(functions, new URL(callablePath(name), SITE).href)({}),
          ),
          httpsCallable(functions, CALLABLES.syncEmails)({}),
        ]);
      } finally {
        await deleteApp(app);
        setLogLevel('warn');
      }

      const hosts = new Set(calls.map((call) => new URL(call).host));
      expect(hosts).toEqual(
        new Set(['firestore.googleapis.com', SITE.host, 'us-central1-demo-goody.cloudfunctions.net']),
      );
      const connectSrc = parsePolicy(cspValue).get('connect-src') ?? [];
      const refused = calls.filter(
        (call) => !connectSrc.some((source) => sourceAllows(source, new URL(call), SITE)),
      );
      expect(refused).toEqual([]);
    });

    it('would refuse the emulators on loopback and other origins (the matcher is not a rubber stamp)', () => {
      const connectSrc = parsePolicy(cspValue).get('connect-src') ?? [];
      for (const url of [
        'http://127.0.0.1:8080/v1/projects/demo-goody/databases/(default)/documents:commit',
        'http://127.0.0.1:5001/demo-goody/us-central1/add-contact-to-mailerlite',
        'https://evil.example/collect',
        'https://cloudfunctions.net.evil.example/x',
      ]) {
        expect({
          url,
          allowed: connectSrc.some((source) => sourceAllows(source, new URL(url), SITE)),
        }).toEqual({
          url,
          allowed: false,
        });
      }
    });
  });

  it('caches hashed build assets for a year, and the asset rule comes after "**" (the last matching rule wins)', () => {
    expect(ruleFor('/assets/**')).toEqual(
      new Map([['cache-control', 'public, max-age=31536000, immutable']]),
    );
    const sources = hosting.headers.map((rule) => rule.source);
    expect(sources.indexOf('/assets/**')).toBeGreaterThan(sources.indexOf('**'));
  });

  it('marks the admin dashboard noindex', () => {
    expect(ruleFor('/admin{,/**}')).toEqual(new Map([['x-robots-tag', 'noindex']]));
  });
});

// ---- The headers as served -----------------------------------------------------------------------------------

const ASSET = '/assets/index-B7x9cQ2d.js';
const STYLE_PROBE = `
const attempt = (apply) => {
  try {
    apply();
  } catch (error) {
    return String(error);
  }
};
// What Emotion does in a production build: an empty <style> element filled through the CSSOM. A policy
// that refuses the element leaves it without a sheet, and the insert throws.
const emotionError = attempt(() => {
  const sheet = document.createElement('style');
  sheet.setAttribute('data-emotion', 'css');
  sheet.appendChild(document.createTextNode(''));
  document.head.appendChild(sheet);
  sheet.sheet.insertRule('#emotion { color: rgb(10, 20, 30); }', 0);
});
// What React does with a style prop: a CSSOM property, never a style attribute.
const reactError = attempt(() => document.getElementById('react').style.setProperty('color', 'rgb(40, 50, 60)'));
window.__probe = {
  emotion: emotionError ?? getComputedStyle(document.getElementById('emotion')).color,
  react: reactError ?? getComputedStyle(document.getElementById('react')).color,
  inlineScriptRan: window.__inlineScriptRan === true,
};
`;

// Like the prerendered landing page, the probe is started by the bootstrap (allowed by its hash) when the
// visitor engages with the header, so it runs only if the served policy lets the bootstrap run.
function writeFixtureSite(dir: string): void {
  mkdirSync(join(dir, 'assets'), { recursive: true });
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>fixture</title>' +
      `<script data-entry="${ASSET}">${BOOTSTRAP_SCRIPT}</script></head><body>` +
      '<header><a href="#emotion">fixture</a></header>' +
      '<p id="emotion">styled by a runtime style sheet</p><p id="react">styled by a style prop</p>' +
      '<script>window.__inlineScriptRan = true;</script></body></html>',
  );
  writeFileSync(join(dir, 'shell.html'), readFileSync(join(dir, 'index.html')));
  writeFileSync(join(dir, ASSET), STYLE_PROBE);
  writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>');
}

let site: ServedSite;
let origin: string;

beforeAll(async () => {
  // The fixture site sits where firebase.json's "public" says the build goes.
  site = await serveLikeHostingEmulator(hosting as typeof hosting & { public: string }, writeFixtureSite);
  origin = site.origin;
});

afterAll(async () => {
  await site?.close();
});

describe('firebase.json hosting headers: as the Hosting emulator serves them (superstatic)', () => {
  const securityHeaders = () =>
    Object.fromEntries([...everyResponse].filter(([key]) => key !== 'cache-control')) as Record<
      string,
      string
    >;

  it.each([
    ['/', 'the landing page', 'no-cache', null],
    ['/admin', 'the admin dashboard', 'no-cache', 'noindex'],
    ['/admin/anything', 'a path under the admin dashboard', 'no-cache', 'noindex'],
    ['/administrator', 'a path that only starts like admin', 'no-cache', null],
    ['/no/such/page', 'the not-found page (the SPA rewrite)', 'no-cache', null],
    ['/favicon.svg', 'an unhashed public file', 'no-cache', null],
    [ASSET, 'a hashed build asset', 'public, max-age=31536000, immutable', null],
  ])('%s (%s): security headers, Cache-Control %j, X-Robots-Tag %j', async (path, _label, cache, robots) => {
    const response = await fetch(`${origin}${path}`, { redirect: 'manual' });
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    for (const [key, value] of Object.entries(securityHeaders())) {
      expect({ key, value: response.headers.get(key) }).toEqual({ key, value });
    }
    expect(response.headers.get('cache-control')).toBe(cache);
    expect(response.headers.get('x-robots-tag')).toBe(robots);
  });
});

// ---- The headers as a browser reads them ---------------------------------------------------------------------

const chromiumPath = findChromium();
if (!chromiumPath) {
  console.warn(
    'hosting-headers: browser checks skipped: no Chromium found (install Debian package chromium, or set CHROMIUM_PATH)',
  );
}

describe.skipIf(!chromiumPath)('firebase.json hosting headers: as Chromium reads them', () => {
  it('parses the policy without a warning, runs the hashed bootstrap, applies Emotion and React styling, and blocks other inline scripts', async () => {
    const browser = await playwrightChromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
    try {
      const page = await browser.newPage();
      const messages: string[] = [];
      page.on('console', (message) => messages.push(`${message.type()}: ${message.text()}`));
      const cdp = await page.context().newCDPSession(page);
      cdp.on('Log.entryAdded', ({ entry }) => messages.push(`${entry.level}/${entry.source}: ${entry.text}`));
      await cdp.send('Log.enable');

      await page.goto(`${origin}/`);
      await page.focus('header a');
      await page.waitForFunction(() => '__probe' in window, undefined, { timeout: 10_000 });
      const probe = await page.evaluate(
        () => (window as unknown as { __probe: Record<string, unknown> }).__probe,
      );

      expect(probe).toEqual({ emotion: 'rgb(10, 20, 30)', react: 'rgb(40, 50, 60)', inlineScriptRan: false });
      // The probe ran, so the bootstrap was allowed and inserted it. The one expected complaint is the
      // refused other inline <script> of the fixture; anything else (an unrecognised directive or
      // Permissions-Policy feature, a refused style) would be listed here.
      const unexpected = messages.filter((text) => !/inline script/i.test(text));
      expect(unexpected).toEqual([]);
      expect(messages.some((text) => /Executing inline script violates/.test(text))).toBe(true);
    } finally {
      await browser.close();
    }
  });
});
