/**
 * The prerendered landing page's app: only the parts that act hydrate, each on a root of its own (the two
 * sign-up forms and the toast layer), and the rest stays the prerendered markup, styled by the CSS in the
 * page's head. No MUI, no Emotion, no router: a visitor's first focus waits for React DOM and two small
 * forms only. main.tsx loads it; every other page (and a client-side visit to the landing page) is the
 * whole app, client.tsx.
 */
import { type SignupSource, SOURCES } from '@goody/contract';
import { type ReactNode, StrictMode, startTransition } from 'react';
import { hydrateRoot, type Root } from 'react-dom/client';
import { LandingSignupForm, SIGNUP_ISLAND_ATTRIBUTE } from '@/features/signup/SignupForm';
import { restorePrerenderedForms } from '@/lib/signupCapture';
import { TOAST_ISLAND_ATTRIBUTE, ToastLayer } from '@/lib/toast/ToastProvider';

const strict = (node: ReactNode) => <StrictMode>{node}</StrictMode>;

/** Hydrates the islands; returns what unmounts them (the tests' clean-up: a page never does). */
export function start(container: HTMLElement): () => void {
  // A sign-up captured before the app came marked its form busy (or said the app was late): hydration
  // must find the markup React rendered. The form takes the captured sign-up over once it is hydrated.
  restorePrerenderedForms(container);
  const toasts = container.querySelector(`[${TOAST_ISLAND_ATTRIBUTE}]`);
  const forms = [...container.querySelectorAll(`[${SIGNUP_ISLAND_ATTRIBUTE}]`)];
  const roots: Root[] = [];
  // As a transition, hydration yields to the browser between slices instead of blocking input.
  startTransition(() => {
    // The toast layer first: a captured sign-up's toast needs it.
    if (toasts) roots.push(hydrateRoot(toasts, strict(<ToastLayer />)));
    for (const island of forms) {
      const source = island.getAttribute(SIGNUP_ISLAND_ATTRIBUTE) as SignupSource;
      if (!SOURCES.includes(source)) throw new Error(`Unknown sign-up form: ${source}`);
      roots.push(hydrateRoot(island, strict(<LandingSignupForm source={source} />)));
    }
  });
  return () => {
    for (const root of roots) root.unmount();
  };
}
