/**
 * Colour and shape primitives. Every pair of text and background colours the site uses is listed in
 * `contrastPairs` and checked against WCAG 2.2 AA by `tokens.test.ts`, so a palette edit that breaks
 * contrast fails the tests instead of shipping.
 */
export const colors = {
  ink: '#1A1033',
  inkMuted: '#4A4163',
  white: '#FFFFFF',
  lavender: '#F5F0FF',
  lavenderLine: '#DCD1F5',
  violet: '#6A2BD9',
  violetDark: '#5B21B6',
  night: '#24104F',
  plum: '#7A1C6E',
  onNight: '#FFFFFF',
  onNightMuted: '#E6DBFF',
  sunshine: '#FFD23F',
  berry: '#B01866',
  successSurface: '#1E6B3A',
  errorSurface: '#B3261E',
  /** What 14% white over the lightest gradient stops looks like (the translucent tiles and chips). */
  nightTintLight: '#7240C0',
  plumTintLight: '#8D3C82',
} as const;

export type ColorName = keyof typeof colors;

/** The hero and final call to action sit on this gradient; its every stop must carry white text. */
export const nightGradient = `linear-gradient(135deg, ${colors.night} 0%, ${colors.violetDark} 55%, ${colors.plum} 100%)`;

/** Text sizes below 24px (or 18.66px bold) must reach 4.5:1; larger text and UI parts 3:1. */
export const contrastPairs: { text: ColorName; background: ColorName; minimum: 4.5 | 3; use: string }[] = [
  { text: 'ink', background: 'white', minimum: 4.5, use: 'body text' },
  { text: 'inkMuted', background: 'white', minimum: 4.5, use: 'secondary text' },
  { text: 'ink', background: 'lavender', minimum: 4.5, use: 'text on tinted sections' },
  { text: 'inkMuted', background: 'lavender', minimum: 4.5, use: 'secondary text on tinted sections' },
  { text: 'violet', background: 'white', minimum: 4.5, use: 'links and eyebrows' },
  { text: 'violet', background: 'lavender', minimum: 4.5, use: 'eyebrows on tinted sections' },
  { text: 'berry', background: 'white', minimum: 4.5, use: 'prices' },
  { text: 'white', background: 'violet', minimum: 4.5, use: 'primary buttons' },
  { text: 'white', background: 'violetDark', minimum: 4.5, use: 'primary buttons, hovered' },
  { text: 'onNight', background: 'night', minimum: 4.5, use: 'text on the gradient (first stop)' },
  { text: 'onNight', background: 'violetDark', minimum: 4.5, use: 'text on the gradient (middle stop)' },
  { text: 'onNight', background: 'plum', minimum: 4.5, use: 'text on the gradient (last stop)' },
  { text: 'onNightMuted', background: 'night', minimum: 4.5, use: 'secondary text on the gradient' },
  { text: 'onNightMuted', background: 'violetDark', minimum: 4.5, use: 'secondary text on the gradient' },
  { text: 'onNightMuted', background: 'plum', minimum: 4.5, use: 'secondary text on the gradient' },
  { text: 'ink', background: 'sunshine', minimum: 4.5, use: 'call-to-action buttons on the gradient' },
  { text: 'sunshine', background: 'night', minimum: 3, use: 'large highlighted heading words' },
  { text: 'sunshine', background: 'violetDark', minimum: 4.5, use: 'highlighted text on the gradient' },
  { text: 'white', background: 'successSurface', minimum: 4.5, use: 'success toasts' },
  { text: 'white', background: 'errorSurface', minimum: 4.5, use: 'error toasts' },
  { text: 'ink', background: 'white', minimum: 3, use: 'outer focus ring against light backgrounds' },
  { text: 'white', background: 'night', minimum: 3, use: 'inner focus ring against the gradient' },
  { text: 'inkMuted', background: 'white', minimum: 3, use: 'text-field border' },
  { text: 'berry', background: 'lavender', minimum: 4.5, use: 'prices in the phone mock-up' },
  { text: 'sunshine', background: 'plum', minimum: 4.5, use: 'eyebrows and icons on the gradient' },
  { text: 'onNight', background: 'ink', minimum: 4.5, use: 'footer text' },
  { text: 'onNightMuted', background: 'ink', minimum: 4.5, use: 'footer secondary text' },
  {
    text: 'onNight',
    background: 'nightTintLight',
    minimum: 4.5,
    use: 'text on translucent tiles over the gradient',
  },
  { text: 'onNightMuted', background: 'nightTintLight', minimum: 4.5, use: 'labels on translucent tiles' },
  { text: 'onNightMuted', background: 'plumTintLight', minimum: 4.5, use: 'labels on translucent tiles' },
];

/** WCAG 2.x relative luminance of an sRGB hex colour. */
export function relativeLuminance(hex: string): number {
  const value = hex.replace('#', '');
  const [r, g, b] = [0, 2, 4].map((start) => {
    const channel = Number.parseInt(value.slice(start, start + 2), 16) / 255;
    return channel <= 0.04045 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrastRatio(a: string, b: string): number {
  const [lighter, darker] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [
    number,
    number,
  ];
  return (lighter + 0.05) / (darker + 0.05);
}

/**
 * A two-tone focus ring (white inside, ink outside) stays visible on light sections and on the dark
 * gradient alike, so one rule serves the whole site.
 */
export const focusRing = {
  outline: `3px solid ${colors.ink}`,
  outlineOffset: '2px',
  boxShadow: `0 0 0 2px ${colors.white}`,
} as const;

export const radii = { card: 20, control: 12, pill: 999 } as const;

/** WCAG 2.2 target size (minimum) is 24px; the site's own controls aim higher. */
export const minTargetPx = 24;

/** Hidden from the eye, still read by screen readers (the classic "sr-only" rule). */
export const visuallyHidden = {
  border: 0,
  clip: 'rect(0 0 0 0)',
  height: '1px',
  margin: '-1px',
  overflow: 'hidden',
  padding: 0,
  position: 'absolute',
  whiteSpace: 'nowrap',
  width: '1px',
} as const;
