import Box from '@mui/material/Box';
import type { SxProps, Theme } from '@mui/material/styles';
import type { ReactNode } from 'react';
import type { IconName } from '@/content/landing';

/** Inline stroke icons: no icon package, no extra request, and they take the text colour. */
const shapes: Record<IconName, ReactNode> = {
  swipe: (
    <>
      <rect x="7" y="3" width="12" height="16" rx="2" />
      <path d="M4 6.5v11A2.5 2.5 0 0 0 6.5 20H15" />
      <path d="m11 10 2 1.5-2 1.5" />
    </>
  ),
  badge: (
    <>
      <circle cx="12" cy="8" r="6" />
      <path d="M8.5 13 7 22l5-3 5 3-1.5-9" />
    </>
  ),
  community: (
    <>
      <circle cx="9" cy="8" r="4" />
      <path d="M2 21v-1.5A4.5 4.5 0 0 1 6.5 15h5a4.5 4.5 0 0 1 4.5 4.5V21" />
      <path d="M16 4.2a4 4 0 0 1 0 7.6" />
      <path d="M22 21v-1.5a4.5 4.5 0 0 0-3-4.2" />
    </>
  ),
  wallet: (
    <>
      <rect x="2" y="5" width="20" height="14" rx="2" />
      <path d="M2 10h20" />
      <path d="M6 15h4" />
    </>
  ),
  shield: (
    <>
      <path d="M12 22s8-4 8-10V5l-8-3-8 3v7c0 6 8 10 8 10z" />
      <path d="m9 12 2 2 4-4" />
    </>
  ),
  approval: (
    <>
      <circle cx="8.5" cy="7" r="4" />
      <path d="M1 21v-1.5A4.5 4.5 0 0 1 5.5 15h6a4.5 4.5 0 0 1 4.5 4.5V21" />
      <path d="m17 11 2 2 4-4" />
    </>
  ),
  coins: (
    <>
      <circle cx="12" cy="12" r="9" />
      <path d="M15 9.5c-.4-1.2-1.6-2-3-2-1.7 0-3 .9-3 2.2 0 3 6 1.6 6 4.6 0 1.3-1.3 2.2-3 2.2-1.4 0-2.6-.8-3-2" />
      <path d="M12 5.5v2M12 16.5v2" />
    </>
  ),
  chart: (
    <>
      <path d="M4 20h16" />
      <path d="M7 16v-5M12 16V6M17 16v-8" />
    </>
  ),
  closet: (
    <>
      <path d="M6 2 3 6v14a2 2 0 0 0 2 2h14a2 2 0 0 0 2-2V6l-3-4z" />
      <path d="M3 6h18" />
      <path d="M16 10a4 4 0 0 1-8 0" />
    </>
  ),
  check: <path d="M20 6 9 17l-5-5" />,
  star: <path d="m12 2 3.1 6.3 6.9 1-5 4.9 1.2 6.8-6.2-3.2-6.2 3.2L7 14.2 2 9.3l6.9-1z" />,
  instagram: (
    <>
      <rect x="3" y="3" width="18" height="18" rx="5" />
      <circle cx="12" cy="12" r="4" />
      <path d="M17.5 6.5h.01" />
    </>
  ),
  tiktok: (
    <>
      <path d="M14 3v11.5a3.5 3.5 0 1 1-3.5-3.5" />
      <path d="M14 3c.6 2.6 2.4 4.4 5 5" />
    </>
  ),
  mail: (
    <>
      <rect x="2" y="4" width="20" height="16" rx="2" />
      <path d="m22 6-10 7L2 6" />
    </>
  ),
  apple: (
    <>
      <path d="M12 7.5c-1-.7-2-1-3-1C6.2 6.5 4.5 8.8 4.5 12c0 4 2.6 8.5 4.8 8.5.9 0 1.6-.5 2.7-.5s1.8.5 2.7.5c2.2 0 4.8-4.5 4.8-8.5 0-3.2-1.7-5.5-4.5-5.5-1 0-2 .3-3 1z" />
      <path d="M12 7c0-2.2 1.3-3.7 3-4" />
    </>
  ),
  android: (
    <>
      <path d="M4 18v-5a8 8 0 0 1 16 0v5z" />
      <path d="m7 5 1.5 2.5M17 5l-1.5 2.5" />
      <path d="M9 12h.01M15 12h.01" />
    </>
  ),
};

export interface IconProps {
  name: IconName;
  size?: number;
  sx?: SxProps<Theme>;
}

/** Decorative: the text beside each icon carries the meaning, so screen readers skip it. */
export function Icon({ name, size = 24, sx }: IconProps) {
  return (
    <Box
      component="svg"
      viewBox="0 0 24 24"
      aria-hidden="true"
      focusable="false"
      fill="none"
      stroke="currentColor"
      strokeWidth={2}
      strokeLinecap="round"
      strokeLinejoin="round"
      sx={[
        { width: size, height: size, flexShrink: 0, display: 'block' },
        ...(Array.isArray(sx) ? sx : [sx]),
      ]}
    >
      {shapes[name]}
    </Box>
  );
}
