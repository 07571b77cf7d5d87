import type { SignupSource } from '@goody/contract';

/**
 * The sign-up toasts, word for word as docs/product.md gives them (Error catalogue and toasts). Errors use the destructive variant.
 */
export const signupMessages = {
  /** The submit button's words, and what screen readers are told, while a sign-up is in flight. */
  inFlight: 'Signing you up…',
  connectionIssue: {
    title: 'Connection Issue',
    description: 'Please check your internet connection and try again.',
  },
  databaseError: {
    title: 'Database Error',
    /** Shown when the database gives no message of its own. */
    fallbackDescription: 'Please try again later.',
  },
  networkError: {
    title: 'Network Error',
    description: 'Please check your connection and try again.',
  },
  success: {
    titleBySource: {
      hero_form: 'Welcome to GOODY! 🎉',
      final_cta: 'Welcome to the GOODY Club! 🌟',
    } satisfies Record<SignupSource, string>,
    description: "You're signed up! Email synced to both platforms.",
  },
} as const;
