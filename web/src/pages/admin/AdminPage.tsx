import Box from '@mui/material/Box';
import Card from '@mui/material/Card';
import CardContent from '@mui/material/CardContent';
import Container from '@mui/material/Container';
import Link from '@mui/material/Link';
import Typography from '@mui/material/Typography';
import { Link as RouterLink } from 'react-router-dom';
import { adminContent } from '@/content/admin';
import { AdminSyncCard } from '@/features/admin-sync/AdminSyncCard';
import { colors } from '@/theme/tokens';

/**
 * The operator's page. The product has no access check on the client (docs/product.md, Screens); search engines are
 * asked not to index it. React hoists the <title> and <meta> below into <head> while this page is
 * mounted, also when rendered on the server.
 */
export function AdminPage() {
  return (
    <>
      <title>{adminContent.documentTitle}</title>
      <meta name="robots" content="noindex" />
      <Box component="main" sx={{ minHeight: '100vh', bgcolor: colors.lavender, py: { xs: 4, md: 6 } }}>
        <Container maxWidth="md">
          <Link component={RouterLink} to="/" sx={{ fontWeight: 700, gap: 0.75 }}>
            <span aria-hidden="true">←</span>
            {adminContent.backToHome}
          </Link>
          <Typography variant="h1" sx={{ fontSize: 'clamp(2rem, 1.6rem + 1.6vw, 2.75rem)', mt: 3, mb: 1 }}>
            {adminContent.title}
          </Typography>
          <Typography color="text.secondary" sx={{ mb: 4 }}>
            {adminContent.lead}
          </Typography>
          <Box
            sx={{
              display: 'grid',
              gap: 3,
              gridTemplateColumns: { xs: 'minmax(0, 1fr)', md: 'repeat(2, minmax(0, 1fr))' },
            }}
          >
            <AdminSyncCard title={adminContent.sync.title} description={adminContent.sync.description} />
            <Card component="section" aria-labelledby="admin-coming-soon-title">
              <CardContent sx={{ p: { xs: 3, sm: 4 } }}>
                <Typography id="admin-coming-soon-title" variant="h2" sx={{ fontSize: '1.375rem', mb: 1 }}>
                  {adminContent.comingSoon.title}
                </Typography>
                <Typography color="text.secondary">{adminContent.comingSoon.description}</Typography>
              </CardContent>
            </Card>
          </Box>
        </Container>
      </Box>
    </>
  );
}
