/** The static document every route starts from: what search engines, link previews and browsers read. */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const webDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const html = readFileSync(join(webDir, 'index.html'), 'utf8');
const head = new DOMParser().parseFromString(html, 'text/html').head;
const meta = (selector: string) => head.querySelector(selector)?.getAttribute('content') ?? null;

describe('index.html', () => {
  it('has a title, a meta description and a mobile viewport', () => {
    expect(head.querySelector('title')?.textContent).toMatch(/GOODY/);
    expect(meta('meta[name="description"]')?.length).toBeGreaterThan(50);
    expect(meta('meta[name="viewport"]')).toBe('width=device-width, initial-scale=1');
    expect(head.ownerDocument.documentElement.lang).toBe('en');
  });

  it('has Open Graph and Twitter card tags, with a large picture, at absolute URLs of the one site origin', () => {
    for (const property of ['og:type', 'og:title', 'og:description', 'og:site_name', 'og:image:alt']) {
      expect(meta(`meta[property="${property}"]`), property).toBeTruthy();
    }
    expect(meta('meta[name="twitter:card"]')).toBe('summary_large_image');
    expect(meta('meta[name="twitter:title"]')).toBeTruthy();
    expect(meta('meta[name="twitter:description"]')).toBeTruthy();
    // The build writes the origin in (plugins/site-origin.ts); the served page's tags are checked by
    // tests/stack/hosting-routes.test.ts.
    expect(meta('meta[property="og:url"]')).toBe('%SITE_ORIGIN%/');
    expect(meta('meta[property="og:image"]')).toBe('%SITE_ORIGIN%/og-image.png');
    expect(meta('meta[name="twitter:image"]')).toBe('%SITE_ORIGIN%/og-image.png');
    expect([meta('meta[property="og:image:width"]'), meta('meta[property="og:image:height"]')]).toEqual([
      '1200',
      '630',
    ]);
  });

  it('links a 1200x630 PNG in public/ as its picture', () => {
    const png = readFileSync(join(webDir, 'public', 'og-image.png'));
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    // IHDR: width and height, big-endian, right after the signature and the chunk's length and type.
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1200, 630]);
  });

  it('links an SVG favicon that exists in public/', () => {
    const icon = head.querySelector('link[rel="icon"]');
    expect(icon?.getAttribute('type')).toBe('image/svg+xml');
    const svg = readFileSync(join(webDir, 'public', icon?.getAttribute('href') ?? ''), 'utf8');
    expect(svg).toMatch(/^<svg[^>]+xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  });

  it('is indexable (the noindex tag belongs to /admin and the not-found page only)', () => {
    expect(head.querySelector('meta[name="robots"]')).toBeNull();
  });
});

describe('robots.txt', () => {
  it('lets every crawler in, /admin included, so they can see its noindex tag', () => {
    const robots = readFileSync(join(webDir, 'public', 'robots.txt'), 'utf8');
    expect(robots).toMatch(/^User-agent: \*$/m);
    expect(robots).toMatch(/^Allow: \/$/m);
    expect(robots).not.toMatch(/^Disallow:/m);
  });
});
