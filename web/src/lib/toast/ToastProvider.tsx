import { enqueueSnackbar, SnackbarProvider } from 'notistack';
import { type ReactNode, useEffect, useState } from 'react';
import { useStyleSheet } from '@/lib/styleSheet';
import { Toast } from './Toast';
import { registerToastLayer, TOAST_ISLAND_ATTRIBUTE, type ToastMessage, type ToastVariant } from './toast';
import { TOAST_CSS } from './toastStyles';

interface Announcement extends ToastMessage {
  /** Changes on every toast, so the same words twice in a row are still announced twice. */
  serial: number;
}

/**
 * Toasts: notistack draws them; two live regions, present from the first render, announce them.
 * A live region that is inserted together with its text is not reliably read by every screen reader,
 * and notistack only mounts its container once a toast exists, so announcing lives here instead.
 * Errors are assertive (role="alert"), successes polite (role="status").
 *
 * A root of its own on the prerendered landing page (app/islands.tsx), so the forms and this layer share
 * no React context: a toast reaches it through ./toast.ts and notistack's global enqueueSnackbar.
 */
export function ToastLayer() {
  useStyleSheet('toast', TOAST_CSS);
  const [latest, setLatest] = useState<Record<ToastVariant, Announcement | null>>({
    success: null,
    error: null,
  });
  useEffect(() => {
    const announce = (message: ToastMessage) =>
      setLatest((previous) => {
        const serial = Math.max(previous.success?.serial ?? 0, previous.error?.serial ?? 0) + 1;
        return { ...previous, [message.variant]: { ...message, serial } };
      });
    return registerToastLayer((message) => {
      enqueueSnackbar(message.title, {
        variant: message.variant,
        description: message.description,
        // Errors stay a little longer: they ask the visitor to act.
        autoHideDuration: message.variant === 'error' ? 9000 : 7000,
      });
      announce(message);
    });
  }, []);

  // The toasts render into this landmark (once it exists in the DOM), so no content sits outside
  // a landmark and screen-reader users can find the latest messages under "Notifications".
  const [region, setRegion] = useState<HTMLElement | null>(null);
  // After hydration only: the prerendered page (and its first layout) stays as it was.
  const [specimen, setSpecimen] = useState(false);
  useEffect(() => setSpecimen(true), []);

  return (
    <SnackbarProvider
      domRoot={region ?? undefined}
      maxSnack={3}
      autoHideDuration={7000}
      anchorOrigin={{ vertical: 'bottom', horizontal: 'center' }}
      Components={{ success: Toast, error: Toast }}
    >
      <section aria-label="Notifications">
        {/* React owns the children of the section; notistack gets a node of its own to portal into. */}
        <div ref={setRegion} />
        <div role="status" className="goody-visually-hidden">
          <LiveText announcement={latest.success} />
        </div>
        <div role="alert" className="goody-visually-hidden">
          <LiveText announcement={latest.error} />
        </div>
        {specimen && <TypeSpecimen />}
      </section>
    </SnackbarProvider>
  );
}

/** The page, then the toast layer in the element the landing page hydrates on its own. */
export function ToastProvider({ children }: { children: ReactNode }) {
  return (
    <>
      {children}
      <div {...{ [TOAST_ISLAND_ATTRIBUTE]: '' }}>
        <ToastLayer />
      </div>
    </>
  );
}

function LiveText({ announcement }: { announcement: Announcement | null }) {
  if (!announcement) return null;
  return (
    <span key={announcement.serial}>
      <span>{announcement.title}</span> <span>{announcement.description}</span>
    </span>
  );
}

/** Emoji of the kind the toasts' titles carry, and text, in each style a toast and its announcement use. */
const SPECIMEN_TEXT = 'GOODY 🎉🌟';

/**
 * The toast's type, laid out once ahead of the first toast, unseen and unread. The first layout of a
 * style's text resolves its fonts: a size and weight not yet on the page, and the emoji font found by
 * fallback, which on the phone profile took 70 to 100 ms (4x CPU) inside the frame that shows the
 * success toast. Laid out here, when the toast layer has hydrated (the browser idle), the toast's frame
 * finds them resolved. Clipped, not hidden: `display: none` would skip the layout that does the work.
 */
function TypeSpecimen() {
  return (
    <div aria-hidden="true" className="goody-visually-hidden" data-toast-specimen="">
      <div className="goody-toast goody-toast--success">
        <div className="goody-toast__text">
          <p className="goody-toast__title">{SPECIMEN_TEXT}</p>
          <p className="goody-toast__description">{SPECIMEN_TEXT}</p>
        </div>
      </div>
      <span>{SPECIMEN_TEXT}</span>
    </div>
  );
}
