import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Typography from '@mui/material/Typography';
import { useEffect } from 'react';
import { Link as RouterLink, useLocation } from 'react-router-dom';
import { notFoundContent } from '@/content/notFound';
import { colors } from '@/theme/tokens';

/** Any path without a screen of its own (docs/product.md, Screens). The missing path is logged for the team. */
export function NotFoundPage() {
  const { pathname } = useLocation();

  useEffect(() => {
    console.error('404 Error: User attempted to access non-existent route:', pathname);
  }, [pathname]);

  return (
    <>
      <title>{notFoundContent.documentTitle}</title>
      <meta name="robots" content="noindex" />
      <Box
        component="main"
        sx={{
          minHeight: '100vh',
          display: 'grid',
          placeItems: 'center',
          textAlign: 'center',
          px: 2,
          bgcolor: colors.lavender,
        }}
      >
        <Box>
          <Typography variant="h1" component="p" sx={{ color: colors.violet, mb: 1 }}>
            {notFoundContent.code}
          </Typography>
          <Typography variant="h1" sx={{ fontSize: '1.5rem', fontWeight: 700, mb: 3 }}>
            {notFoundContent.message}
          </Typography>
          <Button component={RouterLink} to="/" variant="contained">
            {notFoundContent.returnHome}
          </Button>
        </Box>
      </Box>
    </>
  );
}
