import Box from '@mui/material/Box';
import Container from '@mui/material/Container';
import { finalCta } from '@/content/landing';
import { SignupIsland } from '@/features/signup/SignupForm';
import { colors, nightGradient, radii } from '@/theme/tokens';
import { PillList } from '../components/PillList';
import { SectionHeading } from '../components/SectionHeading';

export function FinalCtaSection() {
  return (
    <Box
      component="section"
      id={finalCta.id}
      aria-labelledby="final-cta-title"
      sx={{ py: { xs: 9, md: 13 }, scrollMarginTop: 16 }}
    >
      <Container maxWidth="md">
        <Box
          sx={{
            background: nightGradient,
            color: colors.onNight,
            borderRadius: `${radii.card + 12}px`,
            px: { xs: 2.5, sm: 6 },
            py: { xs: 6, sm: 8 },
            display: 'flex',
            flexDirection: 'column',
            alignItems: 'center',
          }}
        >
          <SectionHeading
            id="final-cta-title"
            tone="onDark"
            eyebrow={finalCta.eyebrow}
            title={finalCta.title}
            lead={finalCta.lead}
          />
          <SignupIsland source="final_cta" />
          <PillList tone="onDark" pills={finalCta.platforms} mt={4} />
        </Box>
      </Container>
    </Box>
  );
}
