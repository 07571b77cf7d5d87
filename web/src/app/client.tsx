/**
 * The browser half of the app (prerender.tsx is the server half): hydrates the prerendered landing
 * page, or renders a route from scratch into the empty app shell. main.tsx loads it.
 */
import { CacheProvider } from '@emotion/react';
import { StrictMode, startTransition } from 'react';
import { createRoot, hydrateRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router-dom';
import { restorePrerenderedForms } from '@/lib/signupCapture';
import { App } from './App';
import { createEmotionCache } from './emotionCache';

export function start(container: HTMLElement): void {
  // The same tree as the prerender, so hydration matches it node for node.
  const app = (
    <StrictMode>
      <CacheProvider value={createEmotionCache()}>
        <BrowserRouter>
          <App />
        </BrowserRouter>
      </CacheProvider>
    </StrictMode>
  );
  if (container.firstElementChild) {
    // A sign-up captured before the app came marked its form busy (or said the app was late): hydration
    // must find the markup React rendered. The form takes the captured sign-up over once it is hydrated.
    restorePrerenderedForms(container);
    // As a transition, hydration is split into slices of a few milliseconds that yield to the browser
    // in between, instead of one long task that blocks input; the page is already painted meanwhile.
    startTransition(() => {
      hydrateRoot(container, app);
    });
  } else {
    createRoot(container).render(app);
  }
}
