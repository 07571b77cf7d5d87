import Box from '@mui/material/Box';

import { SnackbarProvider, useSnackbar } from 'notistack';
import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from 'react';
import { visuallyHidden } from '@/theme/tokens';
import { Toast } from './Toast';

export type ToastVariant = 'success' | 'error';

export interface ToastMessage {
  variant: ToastVariant;
  title: string;
  description: string;
}

interface Announcement extends ToastMessage {
  /** Changes on every toast, so the same words twice in a row are still announced twice. */
  serial: number;
}

const AnnounceContext = createContext<(message: ToastMessage) => void>(() => {});

/**
 * Toasts: notistack draws them; two live regions, present from the first render, announce them.
 * A live region that is inserted together with its text is not reliably read by every screen reader,
 * and notistack only mounts its container once a toast exists, so announcing lives here instead.
 * Errors are assertive (role="alert"), successes polite (role="status").
 */
export function ToastProvider({ children }: { children: ReactNode }) {
  const [latest, setLatest] = useState<Record<ToastVariant, Announcement | null>>({
    success: null,
    error: null,
  });
  const announce = useCallback((message: ToastMessage) => {
    setLatest((previous) => {
      const serial = Math.max(previous.success?.serial ?? 0, previous.error?.serial ?? 0) + 1;
      return { ...previous, [message.variant]: { ...message, serial } };
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
      <AnnounceContext.Provider value={announce}>{children}</AnnounceContext.Provider>
      <Box component="section" aria-label="Notifications">
        {/* React owns the children of the section; notistack gets a node of its own to portal into. */}
        <div ref={setRegion} />
        <Box role="status" sx={visuallyHidden}>
          <LiveText announcement={latest.success} />
        </Box>
        <Box role="alert" sx={visuallyHidden}>
          <LiveText announcement={latest.error} />
        </Box>
      </Box>
    </SnackbarProvider>
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

/** Shows a toast: the visible snackbar and the screen-reader announcement together. */
export function useToast(): (message: ToastMessage) => void {
  const { enqueueSnackbar } = useSnackbar();
  const announce = useContext(AnnounceContext);
  return useMemo(
    () => (message: ToastMessage) => {
      enqueueSnackbar(message.title, {
        variant: message.variant,
        description: message.description,
        // Errors stay a little longer: they ask the visitor to act.
        autoHideDuration: message.variant === 'error' ? 9000 : 7000,
      });
      announce(message);
    },
    [enqueueSnackbar, announce],
  );
}
