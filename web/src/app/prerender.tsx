/**
 * The build-time entry that prerenders a route to HTML (plugins/prerender.ts runs it once per build).
 * It renders the whole app with StaticRouter, and returns the critical CSS of that HTML as style elements
 * for the document head; in the browser only the forms and the toasts hydrate (islands.tsx).
 */
import { CacheProvider } from '@emotion/react';
import createEmotionServer from '@emotion/server/create-instance';
import { StrictMode } from 'react';
import { renderToString } from 'react-dom/server';
import { StaticRouter } from 'react-router-dom';
import { SIGNUP_FORM_CSS } from '@/features/signup/signupFormStyles';
import { styleSheetTags } from '@/lib/styleSheet';
import { TOAST_CSS } from '@/lib/toast/toastStyles';
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
  // The MUI parts' critical CSS, then the plain sheets of the parts that hydrate on their own.
  const head =
    emotionServer.constructStyleTagsFromChunks(emotionServer.extractCriticalToChunks(html)) +
    styleSheetTags({ 'signup-form': SIGNUP_FORM_CSS, toast: TOAST_CSS });
  return { html, head };
}
