/**
 * The whole app in the browser (prerender.tsx is the server half of the landing page, islands.tsx its
 * browser half): renders a route from scratch into the empty app shell. main.tsx loads it.
 */
import { CacheProvider } from '@emotion/react';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router-dom';
import { App } from './App';
import { createEmotionCache } from './emotionCache';

export function start(container: HTMLElement): void {
  createRoot(container).render(
    <StrictMode>
      <CacheProvider value={createEmotionCache()}>
        <BrowserRouter>
          <App />
        </BrowserRouter>
      </CacheProvider>
    </StrictMode>,
  );
}
