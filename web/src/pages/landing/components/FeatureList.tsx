import Box from '@mui/material/Box';
import Typography from '@mui/material/Typography';
import type { IconName } from '@/content/landing';
import { colors } from '@/theme/tokens';
import { Icon } from './Icon';

export interface Feature {
  icon: IconName;
  title: string;
  body: string;
}

export interface FeatureListProps {
  features: readonly Feature[];
  /** The features' heading level in the page outline: one below the heading the list sits under. */
  headingLevel: 'h3' | 'h4';
}

// An h3 feature title is set at the h4 size, so a feature reads the same whatever its level.
const titleStyles = {
  h3: { variant: 'h3', sx: { fontSize: '1.0625rem', mb: 0.5 } },
  h4: { variant: 'h4', sx: { mb: 0.5 } },
} as const;

/** Features, each an icon tile beside its title and a line on it: the benefit groups, the finance tools. */
export function FeatureList({ features, headingLevel }: FeatureListProps) {
  const title = titleStyles[headingLevel];
  return (
    <Box component="ul" sx={{ listStyle: 'none', p: 0, m: 0, display: 'grid', gap: 3 }}>
      {features.map((feature) => (
        <Box component="li" key={feature.title} sx={{ display: 'flex', gap: 2 }}>
          <Box
            sx={{
              display: 'grid',
              placeItems: 'center',
              width: 48,
              height: 48,
              flexShrink: 0,
              borderRadius: '14px',
              bgcolor: colors.lavender,
              color: colors.violet,
            }}
          >
            <Icon name={feature.icon} />
          </Box>
          <Box>
            <Typography variant={title.variant} component={headingLevel} sx={title.sx}>
              {feature.title}
            </Typography>
            <Typography variant="body2" sx={{ color: colors.inkMuted }}>
              {feature.body}
            </Typography>
          </Box>
        </Box>
      ))}
    </Box>
  );
}
