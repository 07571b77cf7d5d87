import Box from '@mui/material/Box';
import Container from '@mui/material/Container';
import Typography from '@mui/material/Typography';
import { finance } from '@/content/landing';
import { colors, nightGradient, radii } from '@/theme/tokens';
import { FeatureList } from '../components/FeatureList';
import { SectionHeading } from '../components/SectionHeading';

export function FinanceSection() {
  const { dashboard } = finance;
  return (
    <Box component="section" aria-labelledby="finance-title" sx={{ py: { xs: 9, md: 13 } }}>
      <Container
        maxWidth="lg"
        sx={{
          display: 'grid',
          gridTemplateColumns: { xs: 'minmax(0, 1fr)', md: 'repeat(2, minmax(0, 1fr))' },
          gap: { xs: 6, md: 8 },
          alignItems: 'center',
        }}
      >
        <Box>
          <SectionHeading
            id="finance-title"
            eyebrow={finance.eyebrow}
            title={finance.title}
            lead={finance.lead}
            align="left"
          />
          <FeatureList features={finance.tools} headingLevel="h3" />
        </Box>
        <Box
          component="figure"
          aria-labelledby="finance-dashboard-title"
          sx={{
            m: 0,
            p: { xs: 3, sm: 4 },
            borderRadius: `${radii.card + 8}px`,
            background: nightGradient,
            color: colors.onNight,
            boxShadow: '0 30px 60px rgba(36, 16, 79, 0.25)',
          }}
        >
          <Box
            sx={{
              display: 'flex',
              flexWrap: 'wrap',
              justifyContent: 'space-between',
              alignItems: 'center',
              gap: 1.5,
              mb: 3,
            }}
          >
            <Typography id="finance-dashboard-title" variant="h3" component="p">
              {dashboard.title}
            </Typography>
            <Box
              component="figcaption"
              sx={{
                px: 1.5,
                py: 0.5,
                borderRadius: 999,
                bgcolor: 'rgba(255, 255, 255, 0.14)',
                fontSize: '0.8125rem',
                fontWeight: 700,
                whiteSpace: 'nowrap',
              }}
            >
              {dashboard.caption}
            </Box>
          </Box>
          <Box
            component="dl"
            sx={{
              m: 0,
              display: 'grid',
              gridTemplateColumns: { xs: 'minmax(0, 1fr)', sm: 'repeat(3, minmax(0, 1fr))' },
              gap: 2,
            }}
          >
            {dashboard.figures.map((figure) => (
              <Box
                key={figure.label}
                sx={{ p: 2.5, borderRadius: `${radii.control + 4}px`, bgcolor: 'rgba(255, 255, 255, 0.1)' }}
              >
                <Box
                  component="dt"
                  sx={{ fontSize: '0.875rem', fontWeight: 600, color: colors.onNightMuted }}
                >
                  {figure.label}
                </Box>
                <Box
                  component="dd"
                  sx={{ m: 0, mt: 0.5, fontSize: '2rem', fontWeight: 800, lineHeight: 1.2 }}
                >
                  {figure.value}
                </Box>
              </Box>
            ))}
          </Box>
        </Box>
      </Container>
    </Box>
  );
}
