import type { Plugin } from 'vite';

/**
 * A link to the site pasted into a chat or a feed shows its title, description and picture (og:image).
 * Those tags need absolute URLs, so index.html writes `%SITE_ORIGIN%` and the build puts the one origin in:
 * VITE_SITE_ORIGIN (e.g. https://goody.app, set in web/.env.production.local for a deploy), or the default.
 */
export const DEFAULT_SITE_ORIGIN = 'https://goody.app';

export function siteOrigin(raw: string | undefined): string {
  const value = raw?.trim() || DEFAULT_SITE_ORIGIN;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`VITE_SITE_ORIGIN must be an absolute URL like https://goody.app, got "${value}"`);
  }
  if (!/^https?:$/.test(url.protocol) || url.pathname !== '/' || url.search || url.hash) {
    throw new Error(`VITE_SITE_ORIGIN must be an origin like https://goody.app (no path), got "${value}"`);
  }
  return url.origin;
}

export function siteOriginPlugin(origin: string): Plugin {
  return {
    name: 'goody-site-origin',
    transformIndexHtml: (html) => html.replaceAll('%SITE_ORIGIN%', origin),
  };
}
