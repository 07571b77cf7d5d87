/**
 * The contract between the web app, the Cloud Functions and the tests, written once. The web app (Vite)
 * and the tests import this source directly; the functions' build compiles it into functions/lib beside
 * their own code, so a deploy carries it without a package to install. It holds facts only: no code
 * that needs Firebase, the DOM or Node.
 *
 * firestore.rules cannot import TypeScript: tests/stack/firestore-rules-offline.test.ts checks that the
 * rules allow exactly the pairs below.
 */

export * from './email';

/** The two sign-up forms of the landing page (their `source`) and the list each one joins. */
export const SIGNUP_FORMS = {
  hero_form: { subscription_type: 'updates' },
  final_cta: { subscription_type: 'club' },
} as const;

export type SignupSource = keyof typeof SIGNUP_FORMS;
export type SubscriptionType = (typeof SIGNUP_FORMS)[SignupSource]['subscription_type'];

export const SOURCES = Object.keys(SIGNUP_FORMS) as readonly SignupSource[];
export const SUBSCRIPTION_TYPES = SOURCES.map(
  (source) => SIGNUP_FORMS[source].subscription_type,
) as readonly SubscriptionType[];

export function subscriptionTypeOf(source: SignupSource): SubscriptionType {
  return SIGNUP_FORMS[source].subscription_type;
}

/** Firestore paths the clients and the functions share. Server-only state is named by the functions. */
export const COLLECTIONS = {
  /** One document per sign-up: an append-only log that no client may read. */
  signups: 'email_subscriptions',
} as const;

/** The connection test reads this document; anyone may read it, it need not exist. */
export const HEALTH_DOCUMENT = { collection: 'public', id: 'health' } as const;

/** What the page writes for one sign-up, besides `created_at` (the server's timestamp). */
export interface NewSignup {
  email: string;
  subscription_type: SubscriptionType;
  source: SignupSource;
}

/** The callable functions, by the names the page calls them. */
export const CALLABLES = {
  addContact: 'add-contact-to-mailerlite',
  sendThankYou: 'send-thank-you-email',
  syncEmails: 'sync-emails-to-mailerlite',
} as const;

export type CallableName = (typeof CALLABLES)[keyof typeof CALLABLES];

type TypeOf<Source extends SignupSource> = (typeof SIGNUP_FORMS)[Source]['subscription_type'];

/** Hero form: `{email, source}`; Join the Club: `{email, source, subscription_type}`. */
export type AddContactRequest =
  | { email: string; source: 'hero_form'; subscription_type?: TypeOf<'hero_form'> }
  | { email: string; source: 'final_cta'; subscription_type: TypeOf<'final_cta'> };

export interface ThankYouRequest {
  email: string;
}

/** The sync takes no input: an empty object. */
export type SyncRequest = Record<string, never>;

/** What the sync answers. The admin page reads success, message, synced and error; the rest is for operators. */
export interface SyncReply {
  success: boolean;
  message: string;
  /**
   * Sign-ups the run read whose contact is in MailerLite, or whose owner unsubscribed: counted together, so
   * the reply does not tell a stranger who stored an address whether its owner had left.
   */
  synced: number;
  error: string | null;
  /** Sign-ups the run did not reach, after its cursor (0 once it read them all; null when not counted). */
  remaining: number | null;
  /** Sign-ups whose address MailerLite refused as invalid (the person's own: not retried). */
  rejected: number;
  /** Stored documents that are not sign-ups (skipped). */
  skipped: number;
}

/**
 * What add-contact and the thank-you mail answer to every well-formed call, whatever became of the
 * address: the reply must not tell a stranger whether an address signed up (docs/architecture.md,
 * privacy). The real outcome is in the functions' logs.
 */
export interface AcceptedReply {
  status: 'accepted';
}

/** The body each callable takes. */
export type CallableRequests = {
  [CALLABLES.addContact]: AddContactRequest;
  [CALLABLES.sendThankYou]: ThankYouRequest;
  [CALLABLES.syncEmails]: SyncRequest;
};

/** What each callable answers. */
export type CallableReplies = {
  [CALLABLES.addContact]: AcceptedReply;
  [CALLABLES.sendThankYou]: AcceptedReply;
  [CALLABLES.syncEmails]: SyncReply;
};

/** The add-contact body for one sign-up, as the page sends it. */
export function addContactRequest(email: string, source: SignupSource): AddContactRequest {
  return source === 'hero_form'
    ? { email, source }
    : { email, source, subscription_type: SIGNUP_FORMS[source].subscription_type };
}
