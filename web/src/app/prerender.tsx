/**
 * The build-time entry that prerenders a route to HTML (plugins/prerender.ts runs it once per build).
 * It renders exactly the tree main.tsx hydrates, with StaticRouter in place of BrowserRouter, and
 * returns the critical CSS of that HTML as style elements for the document head.
 */
import { CacheProvider } from '@emotion/react';
import createEmotionServer from '@emotion/server/create-instance';
import { StrictMode } from 'react';
import { renderToString } from 'react-dom/server';
import { StaticRouter } from 'react-router-dom';
import { App } from './App';
import { createEmotionCache } from './emotionCache';

export interface PrerenderedPage {
  /** The markup that goes inside #root. */
  html: string;
  /** `<style>` elements with every rule the markup uses, for the end of <head>. */
  head: string;
}

export function render(url: string): PrerenderedPage {
  const cache = createEmotionCache();
  const emotionServer = createEmotionServer(cache);
  const html = renderToString(
    <StrictMode>
      <CacheProvider value={cache}>
        <StaticRouter location={url}>
          <App />
        </StaticRouter>
      </CacheProvider>
    </StrictMode>,
  );
  const head = emotionServer.constructStyleTagsFromChunks(emotionServer.extractCriticalToChunks(html));
  return { html, head };
}
