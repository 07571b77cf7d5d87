import Box from '@mui/material/Box';
import Typography from '@mui/material/Typography';
import { colors } from '@/theme/tokens';

export interface SectionHeadingProps {
  id: string;
  eyebrow: string;
  title: string;
  lead?: string;
  tone?: 'onLight' | 'onDark';
  align?: 'left' | 'center';
}

/** The eyebrow, heading and lead that open each landing section; `id` labels the section. */
export function SectionHeading({
  id,
  eyebrow,
  title,
  lead,
  tone = 'onLight',
  align = 'center',
}: SectionHeadingProps) {
  const onDark = tone === 'onDark';
  return (
    <Box sx={{ textAlign: align, maxWidth: 720, mx: align === 'center' ? 'auto' : 0, mb: { xs: 5, md: 7 } }}>
      <Typography
        variant="overline"
        component="p"
        sx={{ color: onDark ? colors.sunshine : colors.violet, mb: 1 }}
      >
        {eyebrow}
      </Typography>
      <Typography id={id} variant="h2" sx={{ color: onDark ? colors.onNight : colors.ink }}>
        {title}
      </Typography>
      {lead ? (
        <Typography
          variant="subtitle1"
          component="p"
          sx={{ mt: 2, color: onDark ? colors.onNightMuted : colors.inkMuted }}
        >
          {lead}
        </Typography>
      ) : null}
    </Box>
  );
}
