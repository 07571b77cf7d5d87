import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { normaliseEmail } from '../contract';

/**
 * "The same person", as the product counts them: one mailbox, however its address is spelled. Every
 * address is lower-cased (providers and MailerLite ignore case), and at the providers below that deliver
 * `Kid.Teen+goody@googlemail.com` to `kidteen@gmail.com`, the dots and the `+tag` that the provider
 * ignores are dropped too. A bot that signs one mailbox up under twelve spellings is then one mailbox:
 * one thank-you, one suppression entry when it unsubscribes, one set of rows to erase.
 *
 * The key is an HMAC of that canonical mailbox with MAILBOX_KEY_SECRET (HKDF-derived for this one
 * purpose), never a plain hash: a plain SHA-256 of an address is confirmed by anyone holding a list of
 * candidate addresses. It names the thank-you record and the suppression entry and is written on each
 * sign-up (`mailbox_key`, by signups/index-signup.ts), and its first 12 characters are the address's handle
 * in the logs. The secret must never be rotated: a new one would forget every suppression.
 */

interface ProviderRules {
  /** The domain its other domains deliver to. */
  domain?: string;
  /** `a.b@` and `ab@` are one mailbox. */
  ignoresDots?: boolean;
  /** `ab+anything@` is delivered to `ab@`. */
  ignoresPlusTags?: boolean;
}

const GMAIL: ProviderRules = { domain: 'gmail.com', ignoresDots: true, ignoresPlusTags: true };
const PLUS_TAGS: ProviderRules = { ignoresPlusTags: true };

/** Providers whose aliasing is documented and stable; any other domain keeps its local part as is. */
export const MAILBOX_PROVIDERS: Readonly<Record<string, ProviderRules>> = {
  'gmail.com': GMAIL,
  'googlemail.com': GMAIL,
  'outlook.com': PLUS_TAGS,
  'hotmail.com': PLUS_TAGS,
  'live.com': PLUS_TAGS,
  'msn.com': PLUS_TAGS,
  'icloud.com': PLUS_TAGS,
  'me.com': PLUS_TAGS,
  'mac.com': PLUS_TAGS,
  'proton.me': PLUS_TAGS,
  'protonmail.com': PLUS_TAGS,
  'pm.me': PLUS_TAGS,
  'fastmail.com': PLUS_TAGS,
};

/** The mailbox an address delivers to, in one spelling (lower case, provider aliases folded). */
export function canonicalMailbox(email: string): string {
  const normalised = normaliseEmail(email);
  const at = normalised.lastIndexOf('@');
  let local = normalised.slice(0, at);
  let domain = normalised.slice(at + 1);
  const rules = MAILBOX_PROVIDERS[domain];
  if (!rules) return normalised;
  if (rules.ignoresPlusTags) {
    const plus = local.indexOf('+');
    // `+tag` alone (an empty mailbox name) is not an alias of anything: keep it as it is.
    if (plus > 0) local = local.slice(0, plus);
  }
  if (rules.ignoresDots) local = local.replaceAll('.', '');
  domain = rules.domain ?? domain;
  return `${local}@${domain}`;
}

const PURPOSE = 'goody-mailbox-key-v1';
const derivedKeys = new Map<string, Buffer>();

function derivedKey(secret: string): Buffer {
  let derived = derivedKeys.get(secret);
  if (!derived) {
    derived = Buffer.from(hkdfSync('sha256', secret, PURPOSE, 'mailbox', 32));
    derivedKeys.set(secret, derived);
  }
  return derived;
}

/** The mailbox's key: 43 base64url characters, a valid Firestore document id. */
export function mailboxKey(secret: string, email: string): string {
  if (!secret) throw new Error('MAILBOX_KEY_SECRET is empty.');
  return createHmac('sha256', derivedKey(secret)).update(canonicalMailbox(email), 'utf8').digest('base64url');
}

/** The environment variable Cloud Functions fills with the secret for each function that declares it. */
export const MAILBOX_KEY_SECRET_NAME = 'MAILBOX_KEY_SECRET';

let processLogKey: string | undefined;

/**
 * The key the logs' handle is made with: MAILBOX_KEY_SECRET when the function declares it (every function
 * that handles an address does), else a key made up for this process, so a handle is never a plain hash
 * that a list of candidate addresses could confirm (it then links lines of one instance only).
 */
export function logKeySecret(): string {
  const secret = process.env[MAILBOX_KEY_SECRET_NAME];
  if (secret) return secret;
  processLogKey ??= randomBytes(32).toString('base64url');
  return processLogKey;
}
