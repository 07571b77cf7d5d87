/**
 * The toasts' API, apart from what draws them: a form shows a toast here, and the toast layer
 * (ToastProvider.tsx: notistack and the live regions) registers itself to draw and announce it. On the
 * prerendered landing page the layer hydrates just after the forms, in a chunk of its own, so a form goes
 * live without waiting for notistack; a toast shown before the layer is there waits for it.
 */
export type ToastVariant = 'success' | 'error';

export interface ToastMessage {
  variant: ToastVariant;
  title: string;
  description: string;
}

/** The attribute of the element around the toast layer, where the landing page hydrates it on its own. */
export const TOAST_ISLAND_ATTRIBUTE = 'data-toast-island';

type Show = (message: ToastMessage) => void;

const layers = new Set<Show>();
const waiting: ToastMessage[] = [];

/** Shows a toast: the visible snackbar and the screen-reader announcement together. */
export function showToast(message: ToastMessage): void {
  if (layers.size === 0) waiting.push(message);
  for (const show of layers) show(message);
}

/** The function that shows a toast (a hook, so components read as before). */
export function useToast(): Show {
  return showToast;
}

/** A mounted toast layer draws every toast from now on, and those that waited for it; returns its removal. */
export function registerToastLayer(show: Show): () => void {
  layers.add(show);
  for (const message of waiting.splice(0)) show(message);
  return () => {
    layers.delete(show);
  };
}
