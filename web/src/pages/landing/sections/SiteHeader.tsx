import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Container from '@mui/material/Container';
import { brand, header } from '@/content/landing';
import { colors, focusRing } from '@/theme/tokens';

/** Sits over the hero's gradient; the skip link is the first stop for keyboard users. */
export function SiteHeader() {
  return (
    <Box
      component="header"
      sx={{ position: 'absolute', top: 0, insetInline: 0, zIndex: 1, color: colors.onNight }}
    >
      <Box
        component="a"
        href="#main"
        sx={{
          position: 'absolute',
          left: 16,
          top: -100,
          zIndex: 2,
          px: 2,
          py: 1.5,
          borderRadius: 2,
          bgcolor: colors.white,
          color: colors.ink,
          fontWeight: 700,
          '&:focus': { top: 12, ...focusRing },
        }}
      >
        {header.skipLink}
      </Box>
      <Container
        maxWidth="lg"
        sx={{ display: 'flex', alignItems: 'center', justifyContent: 'space-between', minHeight: 72 }}
      >
        <Box
          component="a"
          href="/"
          aria-label={brand.homeLabel}
          sx={{
            color: 'inherit',
            textDecoration: 'none',
            fontWeight: 900,
            fontSize: '1.5rem',
            letterSpacing: '0.06em',
          }}
        >
          {brand.name}
        </Box>
        <Button
          href={header.cta.href}
          variant="outlined"
          size="small"
          sx={{ color: 'inherit', borderColor: 'currentColor' }}
        >
          {header.cta.label}
        </Button>
      </Container>
    </Box>
  );
}
