import Box from '@mui/material/Box';
import Container from '@mui/material/Container';
import Typography from '@mui/material/Typography';
import { socialProof } from '@/content/landing';
import { colors, radii } from '@/theme/tokens';
import { SectionHeading } from '../components/SectionHeading';

export function SocialProofSection() {
  return (
    <Box
      component="section"
      aria-labelledby="social-proof-title"
      sx={{ bgcolor: colors.lavender, py: { xs: 9, md: 13 } }}
    >
      <Container maxWidth="lg">
        <SectionHeading id="social-proof-title" eyebrow={socialProof.eyebrow} title={socialProof.title} />
        <Box
          component="dl"
          sx={{
            m: 0,
            display: 'grid',
            gridTemplateColumns: { xs: 'repeat(2, minmax(0, 1fr))', md: 'repeat(4, minmax(0, 1fr))' },
            gap: { xs: 2, md: 3 },
          }}
        >
          {socialProof.stats.map((stat) => (
            <Box
              key={stat.label}
              sx={{
                display: 'flex',
                flexDirection: 'column-reverse',
                justifyContent: 'flex-end',
                textAlign: 'center',
                p: { xs: 2.5, md: 4 },
                borderRadius: `${radii.card}px`,
                bgcolor: colors.white,
                border: `1px solid ${colors.lavenderLine}`,
              }}
            >
              {/* The label comes first in the markup so a screen reader hears what a figure means before it. */}
              <Box component="dt" sx={{ mt: 1, fontWeight: 600, color: colors.inkMuted }}>
                {stat.label}
              </Box>
              <Box
                component="dd"
                sx={{
                  m: 0,
                  fontSize: 'clamp(2rem, 1.5rem + 2vw, 3rem)',
                  fontWeight: 800,
                  color: colors.violet,
                  lineHeight: 1.1,
                }}
              >
                {stat.value}
              </Box>
            </Box>
          ))}
        </Box>
        <Typography variant="body2" sx={{ mt: 4, textAlign: 'center', color: colors.inkMuted }}>
          {socialProof.note}
        </Typography>
      </Container>
    </Box>
  );
}
