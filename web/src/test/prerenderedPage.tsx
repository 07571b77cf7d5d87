import { CacheProvider } from '@emotion/react';
import { act } from '@testing-library/react';
import { StrictMode } from 'react';
import { renderToString } from 'react-dom/server';
import { StaticRouter } from 'react-router-dom';
import { afterEach, beforeEach, vi } from 'vitest';
import { App } from '@/app/App';
import { createEmotionCache } from '@/app/emotionCache';
import { start } from '@/app/islands';
import { resetFirebaseMock } from '@/test/firebaseMock';

/** The tree prerender.tsx renders (its Emotion extraction needs Node, so the markup is rendered here). */
export function prerenderedMarkup(): string {
  return renderToString(
    <StrictMode>
      <CacheProvider value={createEmotionCache()}>
        <StaticRouter location="/">
          <App />
        </StaticRouter>
      </CacheProvider>
    </StrictMode>,
  );
}

export interface PrerenderedPage {
  /** The #root element holding the prerendered markup, a fresh one for each case. */
  readonly container: HTMLElement;
  /** What React reported: error events on window and console.error calls. */
  readonly errors: unknown[];
  /** islands.tsx's start() on the page, as the app's entry runs it; unmounted after the case. */
  hydrate(): Promise<() => void>;
}

/**
 * Registers a beforeEach that lays the prerendered landing page into the document (with the Firebase mock
 * reset, then `reset` for the file's own state) and an afterEach that unmounts what hydrate() started.
 */
export function withPrerenderedPage(reset?: () => void): PrerenderedPage {
  let container: HTMLElement | undefined;
  let unmount: (() => void) | undefined;
  const errors: unknown[] = [];
  // Without window.reportError (jsdom has none), React reports a recoverable hydration error as an
  // error event on window, then on the console.
  const onError = (event: ErrorEvent) => errors.push(event.error);

  beforeEach(() => {
    resetFirebaseMock();
    reset?.();
    errors.length = 0;
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => errors.push(args));
    window.addEventListener('error', onError);
    container = document.createElement('div');
    container.id = 'root';
    container.innerHTML = prerenderedMarkup();
    document.body.append(container);
  });

  afterEach(async () => {
    window.removeEventListener('error', onError);
    // Async, so React's scheduled work (a form settling after its toast) finishes while the page exists.
    await act(async () => unmount?.());
    unmount = undefined;
    container?.remove();
  });

  const page = (): HTMLElement => {
    if (!container) throw new Error('the prerendered page is laid out per case: use it inside a case');
    return container;
  };
  return {
    get container() {
      return page();
    },
    errors,
    async hydrate() {
      unmount = await start(page());
      return unmount;
    },
  };
}
