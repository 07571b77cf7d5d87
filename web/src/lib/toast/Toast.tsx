import Box from '@mui/material/Box';
import IconButton from '@mui/material/IconButton';
import { type CustomContentProps, SnackbarContent, useSnackbar } from 'notistack';
import { forwardRef } from 'react';
import { colors, radii } from '@/theme/tokens';

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
    background: colors.successSurface,
    label: 'Success',
    path: 'M9 16.2 4.8 12l-1.4 1.4L9 19 21 7l-1.4-1.4z',
  },
  error: {
    background: colors.errorSurface,
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
      <Box
        sx={{
          display: 'flex',
          alignItems: 'flex-start',
          gap: 1.5,
          width: '100%',
          maxWidth: 420,
          py: 1.5,
          pl: 2,
          pr: 1,
          borderRadius: `${radii.control}px`,
          bgcolor: look.background,
          color: colors.white,
          boxShadow: '0 12px 32px rgba(26, 16, 51, 0.28)',
        }}
      >
        <Box
          component="svg"
          role="img"
          aria-label={look.label}
          viewBox="0 0 24 24"
          sx={{ width: 22, height: 22, flexShrink: 0, mt: '1px', fill: 'currentColor' }}
        >
          <path d={look.path} />
        </Box>
        <Box sx={{ flex: 1, minWidth: 0 }}>
          <Box component="p" sx={{ m: 0, fontWeight: 700, lineHeight: 1.4 }}>
            {message}
          </Box>
          <Box component="p" sx={{ m: 0, mt: 0.25, fontSize: '0.9375rem', lineHeight: 1.45 }}>
            {description}
          </Box>
        </Box>
        <IconButton
          aria-label="Dismiss notification"
          onClick={() => closeSnackbar(id)}
          sx={{ color: 'inherit', width: 32, height: 32, mt: '-4px' }}
        >
          <Box
            component="svg"
            aria-hidden="true"
            viewBox="0 0 24 24"
            sx={{ width: 18, height: 18, fill: 'currentColor' }}
          >
            <path d="M19 6.4 17.6 5 12 10.6 6.4 5 5 6.4 10.6 12 5 17.6 6.4 19 12 13.4 17.6 19 19 17.6 13.4 12z" />
          </Box>
        </IconButton>
      </Box>
    </SnackbarContent>
  );
});
