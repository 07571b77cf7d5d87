import { describe, expect, it } from 'vitest';
import { DEFAULT_SITE_ORIGIN, siteOrigin, siteOriginPlugin } from './site-origin.ts';

describe('the site origin of the link preview', () => {
  it('is VITE_SITE_ORIGIN as an origin, or the default', () => {
    expect(siteOrigin(undefined)).toBe(DEFAULT_SITE_ORIGIN);
    expect(siteOrigin(' ')).toBe(DEFAULT_SITE_ORIGIN);
    expect(siteOrigin('https://www.goody.example')).toBe('https://www.goody.example');
    expect(siteOrigin('https://www.goody.example/')).toBe('https://www.goody.example');
  });

  it('refuses what is not an origin, with a message naming the variable', () => {
    for (const bad of [
      'goody.app',
      'https://goody.app/landing',
      'ftp://goody.app',
      'https://goody.app/?a=1',
    ]) {
      expect(() => siteOrigin(bad)).toThrow(/VITE_SITE_ORIGIN/);
    }
  });

  it('writes the origin wherever index.html says %SITE_ORIGIN%', () => {
    const plugin = siteOriginPlugin('https://goody.example');
    const transform = plugin.transformIndexHtml as (html: string) => string;
    expect(transform('<meta content="%SITE_ORIGIN%/og-image.png"><link href="%SITE_ORIGIN%/">')).toBe(
      '<meta content="https://goody.example/og-image.png"><link href="https://goody.example/">',
    );
  });
});
