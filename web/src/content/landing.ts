/**
 * Every visible string and figure of the landing page. Sections only lay this out; to change what
 * the page says, change it here. The product's claims, facts and figures (docs/product.md) are all present;
 * nothing is promised beyond them.
 */

export type IconName =
  | 'swipe'
  | 'badge'
  | 'community'
  | 'wallet'
  | 'shield'
  | 'approval'
  | 'coins'
  | 'chart'
  | 'closet'
  | 'check'
  | 'star'
  | 'instagram'
  | 'tiktok'
  | 'mail'
  | 'apple'
  | 'android';

export const brand = {
  name: 'GOODY',
  homeLabel: 'GOODY home',
} as const;

export const header = {
  skipLink: 'Skip to main content',
  cta: { label: 'Join the Club', href: '#join' },
} as const;

export const hero = {
  badge: 'Coming soon to iOS and Android',
  title: { lead: 'The safe, social way for teens to ', highlight: 'buy and sell style' },
  lead: "GOODY is the resale marketplace made for teens, with parental controls built in. Sell what you've outgrown, find pieces you'll love, and learn real money skills along the way.",
  form: {
    label: 'Email address',
    placeholder: 'you@example.com',
    submit: 'Get Early Access',
    hint: 'Be first to hear when we launch. Parent approval is required for all accounts.',
  },
  assurances: ['Parent approval required', 'Identity verification', 'Secure payments'],
  mockup: {
    label: 'Sample of the GOODY shopping feed',
    time: '9:41',
    feedTitle: 'For You',
    swipeHint: 'Swipe right to save, left to pass',
    ratingLabel: (rating: string) => `Seller rated ${rating} out of 5`,
    items: [
      {
        name: 'Vintage Denim Jacket',
        seller: '@mia.thrifts',
        rating: '4.9',
        price: '$25',
        swatch: 'linear-gradient(135deg, #3B5BA5 0%, #7FA7E0 100%)',
      },
      {
        name: 'Cozy Knit Sweater',
        seller: '@sam.styles',
        rating: '4.8',
        price: '$18',
        swatch: 'linear-gradient(135deg, #E98A6B 0%, #F6C9A8 100%)',
      },
      {
        name: 'Retro High-Top Sneakers',
        seller: '@kicks.by.jay',
        rating: '5.0',
        price: '$35',
        swatch: 'linear-gradient(135deg, #1F8A70 0%, #8FD3B6 100%)',
      },
    ],
  },
} as const;

export const benefits = {
  id: 'benefits',
  eyebrow: 'Why GOODY',
  title: 'Built for teens. Trusted by parents.',
  lead: 'Everything teens love about shopping with friends, with the safeguards parents want from day one.',
  groups: [
    {
      audience: 'For teens',
      title: 'Shop, sell and stand out',
      items: [
        {
          icon: 'swipe',
          title: 'A swipe-style social shopping feed',
          body: "Discover pre-loved finds in a feed you swipe like your favourite social app. Save what you love, pass on what you don't.",
        },
        {
          icon: 'badge',
          title: 'Badges, style points and outfit challenges',
          body: 'Earn badges and style points as you buy and sell, and show off your looks in outfit challenges.',
        },
        {
          icon: 'community',
          title: 'A community that has your back',
          body: 'Follow friends and favourite sellers, swap styling tips and cheer each other on.',
        },
      ],
    },
    {
      audience: 'For parents',
      title: 'Peace of mind, built in',
      items: [
        {
          icon: 'wallet',
          title: 'Teen payment options with parental controls',
          body: 'Teens pay and get paid their own way, while you keep the controls.',
        },
        {
          icon: 'shield',
          title: 'Security and trust on every sale',
          body: 'Identity verification, secure payments, dispute resolution and honest reviews.',
        },
        {
          icon: 'approval',
          title: 'Parent approval for every account',
          body: 'Parent approval is required for all accounts, so you are in the loop from the start.',
        },
      ],
    },
  ],
  trust: {
    title: 'Security and trust',
    items: ['Identity verification', 'Secure payments', 'Dispute resolution', 'Reviews'],
  },
} as const;

export const finance = {
  id: 'finance',
  eyebrow: 'Financial literacy tools',
  title: 'Learn money skills with every sale',
  lead: 'GOODY turns your closet into a money lesson: see what you earn, watch your savings grow and know what your wardrobe is worth.',
  tools: [
    {
      icon: 'coins',
      title: 'Bonus coins',
      body: 'Collect bonus coins for smart money moves, like saving part of every sale.',
    },
    {
      icon: 'chart',
      title: 'Finance dashboard',
      body: 'Your earnings, savings and spending together in one simple dashboard.',
    },
    {
      icon: 'closet',
      title: 'Closet value portfolio',
      body: 'Track what your wardrobe is worth, like an investment portfolio for your style.',
    },
  ],
  dashboard: {
    title: 'My finance dashboard',
    caption: 'Sample dashboard',
    figures: [
      { label: 'Total earned', value: '$247' },
      { label: 'Saved', value: '$89' },
      { label: 'Closet value', value: '$456' },
    ],
  },
} as const;

export const socialProof = {
  id: 'social-proof',
  eyebrow: 'The buzz',
  title: 'Teens and parents are already in',
  stats: [
    { value: '200+', label: 'teens signed up' },
    { value: '95%', label: 'excited for launch' },
    { value: '500+', label: 'survey participants' },
    { value: '80%', label: 'said GOODY sounds exciting' },
  ],
  note: 'From our pre-launch sign-ups and a survey of 500+ participants.',
} as const;

export const finalCta = {
  id: 'join',
  eyebrow: 'Early access',
  title: 'Join the GOODY Club',
  lead: 'Be first in line when GOODY launches. Club members get the launch news first.',
  form: {
    label: 'Email address',
    placeholder: 'you@example.com',
    submit: 'Join the Club',
    hint: 'Parent approval is required for all accounts.',
  },
  platforms: [
    { icon: 'apple', label: 'Coming soon on iOS' },
    { icon: 'android', label: 'Coming soon on Android' },
  ],
} as const;

export const footer = {
  tagline: 'The safe, social resale marketplace for teens.',
  socialTitle: 'Follow us',
  social: [
    { icon: 'instagram', label: 'GOODY on Instagram', href: 'https://www.instagram.com/goodyapp/' },
    { icon: 'tiktok', label: 'GOODY on TikTok', href: 'https://www.tiktok.com/@goodyapp' },
  ],
  contactTitle: 'Contact',
  contact: { icon: 'mail', label: 'hello@goody.app', href: 'mailto:hello@goody.app' },
  legalTitle: 'Help and legal',
  /** The product gives these links no target (docs/product.md, Screens); see SiteFooter for how they are rendered. */
  legal: ['Privacy Policy', 'Terms of Service', 'Parent Guide', 'Safety Center'],
  /** Read by screen readers with each of the links above. */
  legalNote: 'This page is coming soon.',
  copyright: '© 2024 GOODY. All rights reserved.',
} as const;

/** The two sign-up forms' words, by the source each one sends. */
export const signupForms = { hero_form: hero.form, final_cta: finalCta.form } as const;
