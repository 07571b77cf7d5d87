/** The Admin Dashboard's own words; the sync button and its toasts live with the sync logic. */
export const adminContent = {
  documentTitle: 'Admin Dashboard · GOODY',
  backToHome: 'Back to Home',
  title: 'Admin Dashboard',
  lead: 'Tools for the GOODY team.',
  sync: {
    title: 'E-mail sync',
    description:
      'Send every stored sign-up to the e-mail marketing service. Runs pick up where the last one stopped, so it is safe to press again.',
  },
  comingSoon: {
    title: 'Coming Soon',
    description: 'More tools for the launch will appear here.',
  },
} as const;
