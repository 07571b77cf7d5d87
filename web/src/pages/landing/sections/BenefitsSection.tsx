import Box from '@mui/material/Box';
import Container from '@mui/material/Container';
import Typography from '@mui/material/Typography';
import { benefits } from '@/content/landing';
import { colors, radii } from '@/theme/tokens';
import { FeatureList } from '../components/FeatureList';
import { PillList } from '../components/PillList';
import { SectionHeading } from '../components/SectionHeading';

export function BenefitsSection() {
  return (
    <Box
      component="section"
      aria-labelledby="benefits-title"
      sx={{ bgcolor: colors.lavender, py: { xs: 9, md: 13 } }}
    >
      <Container maxWidth="lg">
        <SectionHeading
          id="benefits-title"
          eyebrow={benefits.eyebrow}
          title={benefits.title}
          lead={benefits.lead}
        />
        <Box
          sx={{
            display: 'grid',
            gridTemplateColumns: { xs: 'minmax(0, 1fr)', md: 'repeat(2, minmax(0, 1fr))' },
            gap: { xs: 3, md: 4 },
          }}
        >
          {benefits.groups.map((group) => (
            <Box
              key={group.audience}
              sx={{
                bgcolor: colors.white,
                borderRadius: `${radii.card}px`,
                border: `1px solid ${colors.lavenderLine}`,
                p: { xs: 3, sm: 4 },
              }}
            >
              <Typography variant="overline" component="p" sx={{ color: colors.violet }}>
                {group.audience}
              </Typography>
              <Typography variant="h3" sx={{ mb: 3 }}>
                {group.title}
              </Typography>
              <FeatureList features={group.items} headingLevel="h4" />
            </Box>
          ))}
        </Box>
        <Box sx={{ mt: { xs: 5, md: 7 }, textAlign: 'center' }}>
          <Typography variant="h3" component="h3" sx={{ mb: 2 }}>
            {benefits.trust.title}
          </Typography>
          <PillList tone="onLight" pills={benefits.trust.items.map((label) => ({ label, icon: 'shield' }))} />
        </Box>
      </Container>
    </Box>
  );
}
