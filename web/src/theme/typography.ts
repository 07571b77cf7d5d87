import type { ThemeOptions } from '@mui/material/styles';

/**
 * System fonts only: no web-font request, no swap, so text never reflows after first paint (CLS 0).
 * Heading sizes scale with the viewport between a 320px phone and a desktop.
 */
export const fontFamily =
  'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif, "Apple Color Emoji", "Segoe UI Emoji"';

export const typography: ThemeOptions['typography'] = {
  fontFamily,
  h1: {
    fontSize: 'clamp(2.25rem, 1.6rem + 3.2vw, 4rem)',
    fontWeight: 800,
    lineHeight: 1.08,
    letterSpacing: '-0.02em',
  },
  h2: {
    fontSize: 'clamp(1.75rem, 1.4rem + 1.8vw, 2.75rem)',
    fontWeight: 800,
    lineHeight: 1.15,
    letterSpacing: '-0.01em',
  },
  h3: { fontSize: '1.25rem', fontWeight: 700, lineHeight: 1.3 },
  h4: { fontSize: '1.0625rem', fontWeight: 700, lineHeight: 1.35 },
  subtitle1: { fontSize: '1.125rem', lineHeight: 1.6 },
  body1: { fontSize: '1rem', lineHeight: 1.6 },
  body2: { fontSize: '0.9375rem', lineHeight: 1.55 },
  overline: { fontSize: '0.8125rem', fontWeight: 800, letterSpacing: '0.12em', lineHeight: 1.5 },
  button: { textTransform: 'none', fontWeight: 700, fontSize: '1rem' },
};
