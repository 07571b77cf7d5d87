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
