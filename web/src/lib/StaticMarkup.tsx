import { type ReactNode, useId, useState } from 'react';

const ATTRIBUTE = 'data-static-markup';

/** The prerendered HTML of this part of the page, when the browser is hydrating it; null otherwise. */
function prerenderedHtml(id: string): string | null {
  if (typeof document === 'undefined') return null;
  for (const element of document.querySelectorAll(`[${ATTRIBUTE}]`)) {
    if (element.getAttribute(ATTRIBUTE) === id) return element.innerHTML;
  }
  return null;
}

/**
 * Wraps a part of the landing page that has nothing interactive in it (no state, no handlers, no
 * JavaScript-driven styles): text, images drawn in CSS, plain links. The prerender renders it like any
 * other part; hydration then adopts that HTML as it is instead of rendering the part again, which is
 * most of the work hydration would do, and the styles it uses are already in the page's head.
 *
 * The adopted HTML is kept as the element's content, so if React ever renders this part on the client
 * (a hydration that fails and falls back to a client render), it writes the same markup back. A visit
 * that reaches the page on the client (no prerendered HTML) renders the children as usual.
 *
 * The wrapper is `display: contents`: it adds no box, so the layout is that of the children alone.
 */
export function StaticMarkup({ children }: { children: ReactNode }) {
  const id = useId();
  // Read once, on the first render: during hydration that is the prerendered page's own HTML.
  const [html] = useState(() => prerenderedHtml(id));
  const props = { [ATTRIBUTE]: id, style: { display: 'contents' } };
  if (html !== null) {
    // biome-ignore lint/security/noDangerouslySetInnerHtml: the page's own prerendered markup, read back from the DOM it is already in; nothing from outside
    return <div {...props} dangerouslySetInnerHTML={{ __html: html }} />;
  }
  return <div {...props}>{children}</div>;
}
