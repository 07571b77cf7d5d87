import { type CustomContentProps, SnackbarContent, useSnackbar } from 'notistack';
import { forwardRef } from 'react';

declare module 'notistack' {
  interface VariantOverrides {
    success: { description: string };
    error: { description: string };
  }
}

export interface ToastProps extends CustomContentProps {
  description: string;
}

const looks = {
  success: {
    label: 'Success',
    path: 'M9 16.2 4.8 12l-1.4 1.4L9 19 21 7l-1.4-1.4z',
  },
  error: {
    label: 'Error',
    path: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm1 15h-2v-2h2zm0-4h-2V7h2z',
  },
} as const;

/**
 * What a toast looks like: a title over a description, with an icon whose accessible name states the
 * variant (so colour is not the only cue). Screen readers hear it through the live regions of
 * `ToastProvider`, which exist before any toast does; this visible copy is for the eyes.
 */
export const Toast = forwardRef<HTMLDivElement, ToastProps>(function Toast(
  { id, message, description, variant, style, className },
  ref,
) {
  const { closeSnackbar } = useSnackbar();
  const look = variant === 'error' ? looks.error : looks.success;
  return (
    <SnackbarContent ref={ref} style={style} className={className} data-variant={variant}>
      <div className={`goody-toast goody-toast--${variant === 'error' ? 'error' : 'success'}`}>
        <svg className="goody-toast__icon" role="img" aria-label={look.label} viewBox="0 0 24 24">
          <path d={look.path} />
        </svg>
        <div className="goody-toast__text">
          <p className="goody-toast__title">{message}</p>
          <p className="goody-toast__description">{description}</p>
        </div>
        <button
          type="button"
          className="goody-toast__close"
          aria-label="Dismiss notification"
          onClick={() => closeSnackbar(id)}
        >
          <svg aria-hidden="true" viewBox="0 0 24 24">
            <path d="M19 6.4 17.6 5 12 10.6 6.4 5 5 6.4 10.6 12 5 17.6 6.4 19 12 13.4 17.6 19 19 17.6 13.4 12z" />
          </svg>
        </button>
      </div>
    </SnackbarContent>
  );
});
