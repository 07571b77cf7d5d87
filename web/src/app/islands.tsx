/**
 * The prerendered landing page's app: only the parts that act hydrate, each on a root of its own (the two
 * sign-up forms, then the toast layer), and the rest stays the prerendered markup, styled by the CSS in
 * the page's head. No MUI, no Emotion, no router: a visitor's first focus waits for React DOM and two small
 * forms only; notistack and the toast layer come in a chunk of their own, run once the browser is idle
 * after the forms (a toast shown before waits for it, lib/toast/toast.ts). main.tsx loads it; every other
 * page (and a client-side visit to the landing page) is the whole app, client.tsx.
 */
import { type SignupSource, SOURCES } from '@goody/contract';
import { type ReactNode, StrictMode } from 'react';
import { hydrateRoot, type Root } from 'react-dom/client';
import { LandingSignupForm, SIGNUP_ISLAND_ATTRIBUTE } from '@/features/signup/SignupForm';
import { onIdle } from '@/lib/idle';
import { restorePrerenderedForms } from '@/lib/signupCapture';
import { TOAST_ISLAND_ATTRIBUTE } from '@/lib/toast/toast';

const strict = (node: ReactNode) => <StrictMode>{node}</StrictMode>;

/** The longest the toast layer waits for an idle moment: a toast shown before it waits for the layer. */
const TOAST_LAYER_WAIT_MS = 1_000;

/**
 * Hydrates the islands; resolves once the toast layer is hydrated too, with what unmounts them all (the
 * tests' clean-up: a page never does).
 */
export async function start(container: HTMLElement): Promise<() => void> {
  // A sign-up captured before the app came marked its form busy (or said the app was late): hydration
  // must find the markup React rendered. The form takes the captured sign-up over once it is hydrated.
  restorePrerenderedForms(container);
  const roots: Root[] = [];
  for (const island of container.querySelectorAll(`[${SIGNUP_ISLAND_ATTRIBUTE}]`)) {
    const source = island.getAttribute(SIGNUP_ISLAND_ATTRIBUTE) as SignupSource;
    if (!SOURCES.includes(source)) throw new Error(`Unknown sign-up form: ${source}`);
    roots.push(hydrateRoot(island, strict(<LandingSignupForm source={source} />)));
  }
  const toasts = container.querySelector(`[${TOAST_ISLAND_ATTRIBUTE}]`);
  if (toasts) {
    // hydrateRoot only schedules the forms' hydration: evaluating notistack now would run before it, on the
    // path from the visitor's first focus to a live form. The chunk is already fetched (preloaded on
    // engagement); it runs once the forms are done and the browser is idle.
    await new Promise<void>((resolve) => onIdle(resolve, { timeoutMs: TOAST_LAYER_WAIT_MS, fallbackMs: 0 }));
    const { ToastLayer } = await import('@/lib/toast/ToastProvider');
    roots.push(hydrateRoot(toasts, strict(<ToastLayer />)));
  }
  return () => {
    for (const root of roots) root.unmount();
  };
}
