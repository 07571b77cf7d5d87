import Box from '@mui/material/Box';
import type { IconName } from '@/content/landing';
import { colors } from '@/theme/tokens';
import { Icon } from './Icon';

export interface Pill {
  label: string;
  icon: IconName;
}

export interface PillListProps {
  pills: readonly Pill[];
  tone: keyof typeof tones;
  /** Space above the list (theme spacing units). */
  mt?: number;
}

const tones = {
  onLight: {
    pill: { bgcolor: colors.white, border: `1px solid ${colors.lavenderLine}`, fontWeight: 600 },
    icon: { color: colors.violet },
  },
  onDark: {
    pill: { border: '1px solid rgba(255, 255, 255, 0.4)', fontWeight: 600, fontSize: '0.9375rem' },
    icon: undefined,
  },
};

/** A centred, wrapping row of rounded labels, each led by its icon: the trust points, the app stores. */
export function PillList({ pills, tone, mt }: PillListProps) {
  return (
    <Box
      component="ul"
      sx={{
        listStyle: 'none',
        p: 0,
        m: 0,
        // After `m`, so it wins over the reset.
        mt,
        display: 'flex',
        flexWrap: 'wrap',
        justifyContent: 'center',
        gap: 1.5,
      }}
    >
      {pills.map((pill) => (
        <Box
          component="li"
          key={pill.label}
          sx={{
            display: 'inline-flex',
            alignItems: 'center',
            gap: 1,
            px: 2,
            py: 1,
            borderRadius: 999,
            ...tones[tone].pill,
          }}
        >
          <Icon name={pill.icon} size={18} sx={tones[tone].icon} />
          {pill.label}
        </Box>
      ))}
    </Box>
  );
}
