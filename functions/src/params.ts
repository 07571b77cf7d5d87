import { defineBoolean, defineInt, defineSecret, defineString } from 'firebase-functions/params';

// Declared once, bound per function (`secrets: [...]`), read with `.value()` at run time only.

export const MAILERLITE_API_KEY = defineSecret('MAILERLITE_API_KEY', {
  description:
    'MailerLite API token (MailerLite > Integrations > MailerLite API > Generate new token). Sent as a Bearer token to MAILERLITE_BASE_URL.',
});

// `.value()` reads only the environment, where the CLI writes defaults: without the CLI, these.
export const DEFAULTS = {
  MAILERLITE_BASE_URL: 'https://connect.mailerlite.com/api',
  MAILERLITE_GROUP_UPDATES: 'GOODY launch updates',
  MAILERLITE_GROUP_CLUB: 'GOODY Club',
  MAIL_PER_HOUR: 500,
  SYNC_MIN_INTERVAL_SECONDS: 60,
} as const;

/** An int param's value, or its default where no CLI wrote one into the environment. */
export function intParam(param: { name: string; value(): number }, fallback: number): number {
  const raw = process.env[param.name];
  return raw === undefined || raw.trim() === '' ? fallback : param.value();
}

export const MAILERLITE_BASE_URL = defineString('MAILERLITE_BASE_URL', {
  default: DEFAULTS.MAILERLITE_BASE_URL,
  description:
    'Base URL of the MailerLite API, without a trailing slash. Change it only to point at a local stand-in.',
});

export const MAILERLITE_GROUP_UPDATES = defineString('MAILERLITE_GROUP_UPDATES', {
  default: DEFAULTS.MAILERLITE_GROUP_UPDATES,
  description:
    'MailerLite group for hero-form sign-ups (subscription_type "updates"): a numeric group id, or a group name that is looked up and created if missing.',
});

export const MAILERLITE_GROUP_CLUB = defineString('MAILERLITE_GROUP_CLUB', {
  default: DEFAULTS.MAILERLITE_GROUP_CLUB,
  description:
    'MailerLite group for Join the Club sign-ups (subscription_type "club"): a numeric group id, or a group name that is looked up and created if missing.',
});

export const SMTP_URL = defineSecret('SMTP_URL', {
  description:
    'SMTP connection for the thank-you mail, as a URL: smtps://user:pass@host:465 (TLS) or smtp://user:pass@host:587 (STARTTLS required; plain SMTP only to a loopback relay).',
});

export const MAIL_FROM = defineString('MAIL_FROM', {
  description:
    'Sender of the thank-you mail, e.g. "GOODY <hello@your-domain>". Must be an address your SMTP provider may send from; replies to it reach the team.',
});

// Off unless exactly "true": a site built without an App Check key sends no tokens, and would be refused.
export const ENFORCE_APP_CHECK = defineBoolean('ENFORCE_APP_CHECK', {
  default: false,
  description:
    'Refuse callable requests without a valid App Check token. Set true only once the web app is built with VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY and registered for App Check (functions/README.md, App Check).',
});

export const UNSUBSCRIBE_SECRET = defineSecret('UNSUBSCRIBE_SECRET', {
  description:
    'Key of the one-click unsubscribe links in the thank-you mail: a random string of at least 32 bytes (e.g. `openssl rand -base64 48`). Rotating it invalidates every link already sent.',
});

export const MAILBOX_KEY_SECRET = defineSecret('MAILBOX_KEY_SECRET', {
  description:
    'Key of the mailbox keys (privacy/mailbox-key.ts) that name the thank-you records, the suppression list of unsubscribed mailboxes and the address handles in the logs: a random string of at least 32 bytes (e.g. `openssl rand -base64 48`). Never rotate it: a new key forgets every unsubscribe.',
});

export const UNSUBSCRIBE_URL = defineString('UNSUBSCRIBE_URL', {
  description:
    'Public https URL of the unsubscribe function, e.g. https://us-central1-<project>.cloudfunctions.net/unsubscribe (printed by the first deploy). The thank-you mail links to it.',
});

export const MAIL_PER_HOUR = defineInt('MAIL_PER_HOUR', {
  default: DEFAULTS.MAIL_PER_HOUR,
  description:
    'The mail budget: at most this many thank-you mails an hour (mail/budget.ts). Mails over it wait for a later hour; none is dropped. Raise it once the sending domain has a reputation.',
});

export const SYNC_MIN_INTERVAL_SECONDS = defineInt('SYNC_MIN_INTERVAL_SECONDS', {
  default: DEFAULTS.SYNC_MIN_INTERVAL_SECONDS,
  description:
    'How long after a sync ended the next may start (unless it stopped at its deadline with work left): /admin is public, and this keeps a script from making it a stream of reads and tasks.',
});

export const RETENTION_DAYS = defineInt('RETENTION_DAYS', {
  default: 730,
  description:
    'Sign-ups older than this many days are erased by the daily retention job (email_subscriptions).',
});
