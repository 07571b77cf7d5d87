import type { Components, Theme } from '@mui/material/styles';
import { colors, focusRing, minTargetPx, radii } from './tokens';

/** Per-component customisations; pages never restyle these inline. */
export const components: Components<Theme> = {
  MuiCssBaseline: {
    styleOverrides: {
      html: { scrollBehavior: 'smooth', WebkitTextSizeAdjust: '100%' },
      '@media (prefers-reduced-motion: reduce)': {
        html: { scrollBehavior: 'auto' },
        '*, *::before, *::after': {
          transitionDuration: '0.01ms !important',
          animationDuration: '0.01ms !important',
        },
      },
      body: { overflowX: 'hidden' },
      ':focus-visible': focusRing,
      a: { color: colors.violet },
    },
  },
  MuiButtonBase: {
    defaultProps: { disableRipple: true },
    styleOverrides: { root: { '&.Mui-focusVisible': focusRing } },
  },
  MuiButton: {
    defaultProps: { disableElevation: true },
    styleOverrides: {
      root: { borderRadius: radii.pill, minHeight: 48, paddingInline: 24 },
      sizeSmall: { minHeight: 36 },
    },
    variants: [
      {
        // The call-to-action colour on the dark gradient.
        props: { color: 'secondary', variant: 'contained' },
        style: {
          color: colors.ink,
          '&:hover': { backgroundColor: '#FFE07A' },
          '&.Mui-disabled': { backgroundColor: '#F3E3A6', color: colors.ink },
        },
      },
    ],
  },
  MuiOutlinedInput: {
    styleOverrides: {
      root: {
        borderRadius: radii.control,
        backgroundColor: colors.white,
        color: colors.ink,
        minHeight: 48,
        '& .MuiOutlinedInput-notchedOutline': { borderColor: colors.inkMuted },
        '&:hover .MuiOutlinedInput-notchedOutline': { borderColor: colors.ink },
        '&.Mui-focused': focusRing,
        '&.Mui-focused .MuiOutlinedInput-notchedOutline': { borderColor: colors.violet, borderWidth: 2 },
      },
      input: { '&::placeholder': { color: colors.inkMuted, opacity: 1 } },
    },
  },
  MuiLink: {
    defaultProps: { underline: 'always' },
    styleOverrides: {
      root: {
        minHeight: minTargetPx,
        display: 'inline-flex',
        alignItems: 'center',
        textUnderlineOffset: '0.2em',
      },
    },
  },
  MuiCard: {
    defaultProps: { elevation: 0 },
    styleOverrides: { root: { borderRadius: radii.card, border: `1px solid ${colors.lavenderLine}` } },
  },
};
