/**
 * What the sign-up tests expect, written out from the spec (docs/product.md: the forms, the order of the
 * calls, the error catalogue and toasts) rather than taken from the product's own strings, so a changed
 * string fails them.
 */
import type { ExpectedToast } from './renderApp';

/** The address the sign-up tests type. */
export const EMAIL = 'teen.shopper@example.com';

export const SUCCESS_DESCRIPTION = "You're signed up! Email synced to both platforms.";

export const TOASTS = {
  heroSuccess: { variant: 'success', title: 'Welcome to GOODY! 🎉', description: SUCCESS_DESCRIPTION },
  clubSuccess: {
    variant: 'success',
    title: 'Welcome to the GOODY Club! 🌟',
    description: SUCCESS_DESCRIPTION,
  },
  connectionIssue: {
    variant: 'error',
    title: 'Connection Issue',
    description: 'Please check your internet connection and try again.',
  },
  databaseErrorWithoutMessage: {
    variant: 'error',
    title: 'Database Error',
    description: 'Please try again later.',
  },
} as const satisfies Record<string, ExpectedToast>;

/** The hero form's whole sign-up of EMAIL, call by call: connection test, insert, contact, thank-you mail. */
export const HERO_SIGNUP_CALLS = [
  ['connectionTest'],
  ['insertSubscription', { email: EMAIL, subscription_type: 'updates', source: 'hero_form' }],
  ['addContactToMailerlite', { email: EMAIL, source: 'hero_form' }],
  ['sendThankYouEmail', { email: EMAIL }],
];
