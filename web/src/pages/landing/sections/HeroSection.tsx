import Box from '@mui/material/Box';
import Container from '@mui/material/Container';
import Typography from '@mui/material/Typography';
import { hero } from '@/content/landing';
import { SignupIsland } from '@/features/signup/SignupForm';
import { colors, nightGradient } from '@/theme/tokens';
import { Icon } from '../components/Icon';
import { PhoneMockup } from '../components/PhoneMockup';

export function HeroSection() {
  return (
    <Box
      component="section"
      aria-labelledby="hero-title"
      sx={{
        background: nightGradient,
        color: colors.onNight,
        pt: { xs: 13, md: 16 },
        pb: { xs: 8, md: 12 },
        // The tilted phone and its shadow stay inside the hero at every width.
        overflow: 'hidden',
      }}
    >
      <Container
        maxWidth="lg"
        sx={{
          display: 'grid',
          gridTemplateColumns: { xs: '1fr', md: 'minmax(0, 1.15fr) minmax(0, 0.85fr)' },
          gap: { xs: 7, md: 6 },
          alignItems: 'center',
        }}
      >
        <Box>
          <Box
            component="p"
            sx={{
              display: 'inline-flex',
              alignItems: 'center',
              gap: 1,
              m: 0,
              mb: 3,
              px: 1.75,
              py: 0.75,
              borderRadius: 999,
              bgcolor: 'rgba(255, 255, 255, 0.12)',
              fontWeight: 700,
              fontSize: '0.875rem',
            }}
          >
            {/* A span: a div may not sit inside a <p>, and the browser's parser would split the badge. */}
            <Box
              component="span"
              aria-hidden="true"
              sx={{ width: 8, height: 8, borderRadius: '50%', bgcolor: colors.sunshine }}
            />
            {hero.badge}
          </Box>
          <Typography id="hero-title" variant="h1" sx={{ mb: 3 }}>
            {hero.title.lead}
            <Box component="span" sx={{ color: colors.sunshine }}>
              {hero.title.highlight}
            </Box>
          </Typography>
          <Typography
            variant="subtitle1"
            component="p"
            sx={{ color: colors.onNightMuted, mb: 4, maxWidth: 560 }}
          >
            {hero.lead}
          </Typography>
          <SignupIsland source="hero_form" />
          <Box
            component="ul"
            sx={{
              listStyle: 'none',
              p: 0,
              m: 0,
              mt: 4,
              display: 'flex',
              flexWrap: 'wrap',
              gap: { xs: 1.5, sm: 3 },
            }}
          >
            {hero.assurances.map((assurance) => (
              <Box
                component="li"
                key={assurance}
                sx={{ display: 'flex', alignItems: 'center', gap: 1, fontWeight: 600 }}
              >
                <Icon name="check" size={18} sx={{ color: colors.sunshine }} />
                {assurance}
              </Box>
            ))}
          </Box>
        </Box>
        <Box sx={{ display: 'flex', justifyContent: 'center' }}>
          <PhoneMockup />
        </Box>
      </Container>
    </Box>
  );
}
