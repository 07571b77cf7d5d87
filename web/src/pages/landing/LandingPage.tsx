import Box from '@mui/material/Box';
import { BenefitsSection } from './sections/BenefitsSection';
import { FinalCtaSection } from './sections/FinalCtaSection';
import { FinanceSection } from './sections/FinanceSection';
import { HeroSection } from './sections/HeroSection';
import { SiteFooter } from './sections/SiteFooter';
import { SiteHeader } from './sections/SiteHeader';
import { SocialProofSection } from './sections/SocialProofSection';

/** The landing page only composes its sections, in the product's order (docs/product.md, Screens). */
export function LandingPage() {
  return (
    <>
      <SiteHeader />
      <Box
        component="main"
        id="main"
        tabIndex={-1}
        sx={{ position: 'relative', '&:focus': { outline: 'none' } }}
      >
        <HeroSection />
        <BenefitsSection />
        <FinanceSection />
        <SocialProofSection />
        <FinalCtaSection />
      </Box>
      <SiteFooter />
    </>
  );
}
