import Box from '@mui/material/Box';
import { brand, hero } from '@/content/landing';
import { colors, visuallyHidden } from '@/theme/tokens';
import { Icon } from './Icon';

const { mockup } = hero;

/**
 * A phone drawn in HTML and CSS: sharp at any size, nothing to download, and its fixed dimensions
 * reserve its space before anything paints, so it cannot shift the layout.
 */
export function PhoneMockup() {
  return (
    <Box
      component="figure"
      aria-labelledby="phone-mockup-caption"
      sx={{
        m: 0,
        width: { xs: 280, md: 304 },
        maxWidth: '100%',
        p: 1.25,
        borderRadius: '44px',
        bgcolor: colors.ink,
        boxShadow: '0 40px 80px rgba(10, 4, 30, 0.45), inset 0 0 0 2px rgba(255, 255, 255, 0.12)',
        transform: { md: 'rotate(3deg)' },
      }}
    >
      <Box component="figcaption" id="phone-mockup-caption" sx={visuallyHidden}>
        {mockup.label}
      </Box>
      <Box sx={{ borderRadius: '34px', bgcolor: colors.white, color: colors.ink, overflow: 'hidden', pb: 2 }}>
        <Box
          aria-hidden="true"
          sx={{
            display: 'flex',
            justifyContent: 'space-between',
            alignItems: 'center',
            px: 3,
            pt: 1.5,
            fontSize: '0.75rem',
            fontWeight: 700,
          }}
        >
          <span>{mockup.time}</span>
          <Box sx={{ width: 72, height: 18, borderRadius: 999, bgcolor: colors.ink }} />
          <Box sx={{ width: 22, height: 10, borderRadius: '3px', border: `2px solid ${colors.ink}` }} />
        </Box>
        <Box
          sx={{
            display: 'flex',
            justifyContent: 'space-between',
            alignItems: 'baseline',
            px: 2.5,
            pt: 2,
            pb: 1,
          }}
        >
          <Box component="p" sx={{ m: 0, fontWeight: 900, fontSize: '1.25rem', letterSpacing: '0.04em' }}>
            {brand.name}
          </Box>
          <Box component="p" sx={{ m: 0, fontWeight: 700, fontSize: '0.875rem', color: colors.violet }}>
            {mockup.feedTitle}
          </Box>
        </Box>
        <Box component="ul" sx={{ listStyle: 'none', m: 0, px: 1.5, display: 'grid', gap: 1 }}>
          {mockup.items.map((item) => (
            <Box
              component="li"
              key={item.name}
              sx={{
                display: 'grid',
                gridTemplateColumns: '56px minmax(0, 1fr) auto',
                alignItems: 'center',
                gap: 1.5,
                p: 1,
                borderRadius: '16px',
                bgcolor: colors.lavender,
              }}
            >
              <Box
                aria-hidden="true"
                sx={{ width: 56, height: 56, borderRadius: '12px', background: item.swatch }}
              />
              <Box sx={{ minWidth: 0 }}>
                <Box component="p" sx={{ m: 0, fontWeight: 700, fontSize: '0.875rem', lineHeight: 1.3 }}>
                  {item.name}
                </Box>
                <Box
                  component="p"
                  sx={{ m: 0, fontSize: '0.75rem', color: colors.inkMuted, lineHeight: 1.4 }}
                >
                  {item.seller}
                </Box>
                <Box
                  component="p"
                  sx={{
                    m: 0,
                    display: 'flex',
                    alignItems: 'center',
                    gap: 0.5,
                    fontSize: '0.75rem',
                    fontWeight: 700,
                  }}
                >
                  <Icon name="star" size={12} sx={{ color: colors.berry, fill: colors.berry }} />
                  <span aria-hidden="true">{item.rating}</span>
                  <Box component="span" sx={visuallyHidden}>
                    {mockup.ratingLabel(item.rating)}
                  </Box>
                </Box>
              </Box>
              <Box component="p" sx={{ m: 0, fontWeight: 800, fontSize: '1rem', color: colors.berry }}>
                {item.price}
              </Box>
            </Box>
          ))}
        </Box>
        <Box
          component="p"
          sx={{
            m: 0,
            mt: 2,
            px: 2,
            textAlign: 'center',
            fontSize: '0.75rem',
            fontWeight: 600,
            color: colors.inkMuted,
          }}
        >
          {mockup.swipeHint}
        </Box>
      </Box>
    </Box>
  );
}
