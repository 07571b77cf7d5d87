import Box from '@mui/material/Box';
import Container from '@mui/material/Container';
import Link from '@mui/material/Link';
import Typography from '@mui/material/Typography';
import { brand, footer } from '@/content/landing';
import { colors, minTargetPx, visuallyHidden } from '@/theme/tokens';
import { Icon } from '../components/Icon';

const columnTitle = {
  fontSize: '0.875rem',
  fontWeight: 800,
  letterSpacing: '0.08em',
  textTransform: 'uppercase',
  mb: 1.5,
} as const;
const linkList = { listStyle: 'none', p: 0, m: 0, display: 'grid', gap: 0.5 } as const;
const footerLink = {
  color: colors.onNight,
  minHeight: minTargetPx,
  display: 'inline-flex',
  alignItems: 'center',
  gap: 1,
  textDecorationColor: 'rgba(255, 255, 255, 0.5)',
  textUnderlineOffset: '0.2em',
} as const;

/**
 * The product (docs/product.md) gives Privacy Policy, Terms of Service, Parent Guide and Safety Center no target. An <a>
 * without href is the HTML placeholder for such a link, but it is not focusable, so keyboard users
 * could never reach what mouse users see; and Lighthouse counts it as an uncrawlable link once the
 * page has click listeners. A button styled as a link would promise an action that does nothing.
 * So each is a focusable link marked aria-disabled: screen readers announce "link, unavailable",
 * keyboard users can reach it, nobody is sent anywhere, and the note says why.
 */
function PlaceholderLink({ label, noteId }: { label: string; noteId: string }) {
  return (
    <Box
      component="a"
      role="link"
      aria-disabled="true"
      aria-describedby={noteId}
      tabIndex={0}
      sx={{ ...footerLink, textDecoration: 'underline', cursor: 'default' }}
    >
      {label}
    </Box>
  );
}

export function SiteFooter() {
  return (
    <Box component="footer" sx={{ bgcolor: colors.ink, color: colors.onNight, pt: { xs: 7, md: 9 }, pb: 4 }}>
      <Container maxWidth="lg">
        <Box
          sx={{
            display: 'grid',
            gridTemplateColumns: {
              xs: 'minmax(0, 1fr)',
              sm: 'repeat(2, minmax(0, 1fr))',
              md: 'minmax(0, 1.4fr) repeat(3, minmax(0, 1fr))',
            },
            gap: { xs: 4, md: 6 },
          }}
        >
          <Box>
            <Typography
              component="p"
              sx={{ fontWeight: 900, fontSize: '1.5rem', letterSpacing: '0.06em', mb: 1 }}
            >
              {brand.name}
            </Typography>
            <Typography variant="body2" sx={{ color: colors.onNightMuted, maxWidth: 280 }}>
              {footer.tagline}
            </Typography>
          </Box>
          <Box component="nav" aria-labelledby="footer-social-title">
            <Typography id="footer-social-title" component="h2" sx={columnTitle}>
              {footer.socialTitle}
            </Typography>
            <Box component="ul" sx={linkList}>
              {footer.social.map((profile) => (
                <li key={profile.href}>
                  <Link href={profile.href} sx={footerLink}>
                    <Icon name={profile.icon} size={20} />
                    {profile.label}
                  </Link>
                </li>
              ))}
            </Box>
          </Box>
          <Box>
            <Typography component="h2" sx={columnTitle}>
              {footer.contactTitle}
            </Typography>
            <Link href={footer.contact.href} sx={footerLink}>
              <Icon name={footer.contact.icon} size={20} />
              {footer.contact.label}
            </Link>
          </Box>
          <Box component="nav" aria-labelledby="footer-legal-title">
            <Typography id="footer-legal-title" component="h2" sx={columnTitle}>
              {footer.legalTitle}
            </Typography>
            <Box component="ul" sx={linkList}>
              {footer.legal.map((label) => (
                <li key={label}>
                  <PlaceholderLink label={label} noteId="footer-legal-note" />
                </li>
              ))}
            </Box>
            <Box component="p" id="footer-legal-note" sx={visuallyHidden}>
              {footer.legalNote}
            </Box>
          </Box>
        </Box>
        <Box
          sx={{
            mt: { xs: 6, md: 8 },
            pt: 3,
            borderTop: '1px solid rgba(255, 255, 255, 0.16)',
            color: colors.onNightMuted,
          }}
        >
          <Typography variant="body2">{footer.copyright}</Typography>
        </Box>
      </Container>
    </Box>
  );
}
