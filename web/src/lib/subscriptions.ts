/**
 * The sign-up vocabulary shared by the forms and the Firebase calls (spec section 7): which form a
 * sign-up came from and which list it joins.
 */
export type SubscriptionSource = 'hero_form' | 'final_cta';
export type SubscriptionType = 'updates' | 'club';

export const subscriptionTypeBySource = {
  hero_form: 'updates',
  final_cta: 'club',
} as const satisfies Record<SubscriptionSource, SubscriptionType>;

export interface NewSubscription {
  email: string;
  subscription_type: SubscriptionType;
  source: SubscriptionSource;
}

/** Hero body: {email, source}; final body: {email, source, subscription_type} (spec section 7). */
export type AddContactRequest =
  | { email: string; source: 'hero_form' }
  | { email: string; source: 'final_cta'; subscription_type: 'club' };

export interface ThankYouRequest {
  email: string;
}

/** The fields of the sync reply the admin page reads; any of them may be missing. */
export interface SyncResponse {
  success?: boolean;
  message?: string;
  synced?: number;
  error?: string;
}
