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

  it('has Open Graph and Twitter card tags', () => {
    for (const property of ['og:type', 'og:title', 'og:description', 'og:site_name']) {
      expect(meta(`meta[property="${property}"]`), property).toBeTruthy();
    }
    expect(meta('meta[name="twitter:card"]')).toBe('summary');
    expect(meta('meta[name="twitter:title"]')).toBeTruthy();
    expect(meta('meta[name="twitter:description"]')).toBeTruthy();
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
