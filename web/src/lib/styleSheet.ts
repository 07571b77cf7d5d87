import { useInsertionEffect } from 'react';
import { visuallyHidden } from '@/theme/tokens';

/**
 * Plain style sheets for the parts of the landing page that hydrate on their own (the sign-up forms, the
 * toasts): they carry no CSS-in-JS runtime. The prerender writes each sheet into the page's head
 * (`styleSheetTags`); a page rendered in the browser (the app shell, a client-side navigation) gets the
 * same sheet once, from the component that needs it.
 */
const ID_ATTRIBUTE = 'data-goody-sheet';

export function styleSheetTags(sheets: Record<string, string>): string {
  return Object.entries(sheets)
    .map(([id, css]) => `<style ${ID_ATTRIBUTE}="${id}">${css}</style>`)
    .join('');
}

export function useStyleSheet(id: string, css: string): void {
  useInsertionEffect(() => {
    if (document.head.querySelector(`style[${ID_ATTRIBUTE}="${id}"]`)) return;
    const style = document.createElement('style');
    style.setAttribute(ID_ATTRIBUTE, id);
    style.textContent = css;
    document.head.append(style);
  }, [id, css]);
}

/** The theme's screen-reader-only rule as a class, for the sheets that need it (each stands alone). */
export const VISUALLY_HIDDEN_RULE = `.goody-visually-hidden{${Object.entries(visuallyHidden)
  .map(([key, value]) => `${key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}:${value}`)
  .join(';')}}`;
