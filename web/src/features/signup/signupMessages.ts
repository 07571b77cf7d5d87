import type { SubscriptionSource } from '@/lib/subscriptions';

/**
 * The sign-up toasts, word for word from the spec (section 8). Errors use the destructive variant.
 */
export const signupMessages = {
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
    } satisfies Record<SubscriptionSource, string>,
    description: "You're signed up! Email synced to both platforms.",
  },
} as const;
