import Box from '@mui/material/Box';
import Container from '@mui/material/Container';
import Typography from '@mui/material/Typography';
import { benefits } from '@/content/landing';
import { colors, radii } from '@/theme/tokens';
import { Icon } from '../components/Icon';
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
              <Box component="ul" sx={{ listStyle: 'none', p: 0, m: 0, display: 'grid', gap: 3 }}>
                {group.items.map((item) => (
                  <Box component="li" key={item.title} sx={{ display: 'flex', gap: 2 }}>
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
                      <Icon name={item.icon} />
                    </Box>
                    <Box>
                      <Typography variant="h4" component="h4" sx={{ mb: 0.5 }}>
                        {item.title}
                      </Typography>
                      <Typography variant="body2" sx={{ color: colors.inkMuted }}>
                        {item.body}
                      </Typography>
                    </Box>
                  </Box>
                ))}
              </Box>
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
