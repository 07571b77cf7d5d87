// @vitest-environment node
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createServer as createViteServer, type ViteDevServer } from 'vite';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { functionRewriteProxy, globToRegExpSource, hostingFunctionRewrites } from './hosting-rewrites.ts';

const firebaseJson = {
  hosting: {
    public: 'web/dist',
    rewrites: [
      { source: '/api/add-contact', function: { functionId: 'add-contact', region: 'europe-west1' } },
      { source: '/legacy/**', function: 'legacy' },
      { regex: '^/re/[0-9]+$', function: { functionId: 're' } },
      { source: '!/assets/**', destination: '/shell.html' },
    ],
  },
};

const onEmulators = {
  projectId: 'demo-goody',
  emulators: { firestore: { host: '127.0.0.1', port: 8080 }, functions: { host: '127.0.0.1', port: 5001 } },
};

describe("Hosting's globs", () => {
  it.each([
    ['/api/add-contact', '/api/add-contact', true],
    ['/api/add-contact', '/api/add-contactx', false],
    ['/legacy/**', '/legacy/a/b', true],
    ['/legacy/*', '/legacy/a/b', false],
    ['/legacy/*', '/legacy/a', true],
    ['/{a,b}/x.js', '/b/x.js', true],
    ['/{a,b}/x.js', '/c/x.js', false],
    ['/a.b', '/axb', false],
  ])('%s matches %s: %s', (glob, path, matches) => {
    expect(new RegExp(`^${globToRegExpSource(glob)}$`).test(path)).toBe(matches);
  });
});

describe("firebase.json's function rewrites as Vite proxy entries", () => {
  it('sends each to the Functions emulator as the Hosting emulator does: the function URL, then the path', () => {
    const proxy = functionRewriteProxy(firebaseJson, onEmulators);
    const entries = Object.entries(proxy).map(([key, options]) => ({
      key,
      target: options.target,
      path: options.rewrite?.('/api/add-contact'),
    }));
    expect(entries).toEqual([
      {
        key: '^/api/add-contact(?:\\?.*)?$',
        target: 'http://127.0.0.1:5001',
        path: '/demo-goody/europe-west1/add-contact/api/add-contact',
      },
      {
        key: '^/legacy/.*(?:\\?.*)?$',
        target: 'http://127.0.0.1:5001',
        path: '/demo-goody/us-central1/legacy/api/add-contact',
      },
      {
        key: '^(?:/re/[0-9]+)(?:\\?.*)?$',
        target: 'http://127.0.0.1:5001',
        path: '/demo-goody/us-central1/re/api/add-contact',
      },
    ]);
  });

  it("sends each to the function's own host when the page is not on the emulators", () => {
    const proxy = functionRewriteProxy(firebaseJson, { projectId: 'goody-prod', emulators: null });
    const first = Object.values(proxy)[0];
    expect(first?.target).toBe('https://europe-west1-goody-prod.cloudfunctions.net');
    expect(first?.rewrite?.('/api/add-contact')).toBe('/add-contact/api/add-contact');
  });

  it('has nothing to proxy without function rewrites', () => {
    expect(
      functionRewriteProxy(
        { hosting: { rewrites: [{ source: '**', destination: '/index.html' }] } },
        onEmulators,
      ),
    ).toEqual({});
    expect(functionRewriteProxy({}, onEmulators)).toEqual({});
  });
});

describe('the plugin in a running Vite dev server', () => {
  let dir: string | undefined;
  let vite: ViteDevServer | undefined;
  let functions: Server | undefined;
  afterEach(async () => {
    await vite?.close();
    await new Promise((resolve) => (functions ? functions.close(resolve) : resolve(undefined)));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('forwards a call on the page origin to the function in the Functions emulator, body and answer unchanged', async () => {
    const seen: { method?: string; url?: string; body: string; forwardedHost?: string }[] = [];
    functions = createServer((request: IncomingMessage, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        seen.push({
          method: request.method,
          url: request.url,
          body,
          forwardedHost: request.headers['x-forwarded-host'] as string | undefined,
        });
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"result":{"status":"accepted"}}');
      });
    });
    await new Promise<void>((resolve) => functions?.listen(0, '127.0.0.1', resolve));
    const functionsPort = (functions.address() as AddressInfo).port;

    dir = mkdtempSync(path.join(os.tmpdir(), 'goody-rewrites-'));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>t</title>');
    writeFileSync(path.join(dir, 'firebase.json'), JSON.stringify(firebaseJson));
    vi.stubEnv('VITE_FUNCTIONS_EMULATOR_HOST', `127.0.0.1:${functionsPort}`);
    vi.stubEnv('VITE_FIREBASE_PROJECT_ID', 'demo-goody');
    vite = await createViteServer({
      configFile: false,
      root: dir,
      logLevel: 'silent',
      plugins: [hostingFunctionRewrites({ firebaseJson: 'firebase.json' })],
      server: { host: '127.0.0.1', port: 0 },
    });
    await vite.listen();
    const origin = vite.resolvedUrls?.local[0]?.replace(/\/$/, '');

    const response = await fetch(`${origin}/api/add-contact`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"data":{"email":"kid@example.com"}}',
    });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ result: { status: 'accepted' } });
    expect(seen).toEqual([
      {
        method: 'POST',
        url: '/demo-goody/europe-west1/add-contact/api/add-contact',
        body: '{"data":{"email":"kid@example.com"}}',
        forwardedHost: new URL(origin as string).host,
      },
    ]);
    // Everything else is still Vite's.
    const page = await fetch(`${origin}/`);
    expect(await page.text()).toContain('/@vite/client');
    expect(seen).toHaveLength(1);
  });
});
