// Which file firebase.json's hosting section answers each path with, as the Hosting emulator's engine
// (superstatic) serves it: the prerendered landing page at `/`, the app shell for every other route (they
// render on the client), and a plain 404 for a hashed asset that does not exist, never an HTML page that
// the asset rule would then let browsers cache for a year as if it were the script.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServedSite, serveLikeHostingEmulator } from './hosting-emulator.ts';

const hosting = (
  JSON.parse(readFileSync(new URL('../../firebase.json', import.meta.url), 'utf8')) as {
    hosting: Record<string, unknown> & { public: string };
  }
).hosting;

const page = (marker: string) =>
  `<!doctype html><html lang="en"><head><title>${marker}</title></head><body><div id="root">${marker}</div></body></html>`;

let site: ServedSite;
let origin: string;

beforeAll(async () => {
  site = await serveLikeHostingEmulator(hosting, (publicDir) => {
    mkdirSync(join(publicDir, 'assets'), { recursive: true });
    writeFileSync(join(publicDir, 'index.html'), page('prerendered landing page'));
    writeFileSync(join(publicDir, 'shell.html'), page('app shell'));
    writeFileSync(join(publicDir, 'assets', 'index-Ab12Cd34.js'), 'export const built = true;\n');
  });
  origin = site.origin;
});

afterAll(async () => {
  await site?.close();
});

async function get(path: string) {
  const response = await fetch(`${origin}${path}`, { redirect: 'manual' });
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
}

describe('firebase.json hosting routes (superstatic)', () => {
  it('answers / with the prerendered landing page', async () => {
    const landing = await get('/');
    expect(landing.status).toBe(200);
    expect(landing.body).toContain('prerendered landing page');
  });

  it.each(['/admin', '/admin/anything', '/no/such/page', '/assets'])(
    'answers %s with the app shell, which renders the route on the client',
    async (path) => {
      const response = await get(path);
      expect(response.status).toBe(200);
      expect(response.type).toContain('text/html');
      expect(response.body).toContain('app shell');
    },
  );

  it('serves a hashed asset that exists', async () => {
    const asset = await get('/assets/index-Ab12Cd34.js');
    expect(asset.status).toBe(200);
    expect(asset.type).toContain('javascript');
    expect(asset.body).toBe('export const built = true;\n');
  });

  it.each(['/assets/index-Missing0.js', '/assets/deep/missing.css'])(
    'answers a missing asset (%s) with 404, not with an HTML page',
    async (path) => {
      const missing = await get(path);
      expect(missing.status).toBe(404);
      expect(missing.body).not.toContain('app shell');
      expect(missing.body).not.toContain('prerendered landing page');
    },
  );
});
