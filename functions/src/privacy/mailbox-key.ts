import { createHmac, randomBytes } from 'node:crypto';
import { normaliseEmail } from '../contract';
import { derivedKey } from '../derived-key';

/**
 * One mailbox, however spelled: lower case, a `+tag` dropped on every domain (where one does not deliver it,
 * the fold only mails less), Gmail's dots and googlemail.com folded; so a bot's twelve spellings are one
 * mailbox (docs/security/abuse.md). The key is an HMAC, never a plain hash, which a list of candidate
 * addresses would confirm. MAILBOX_KEY_SECRET must never be rotated: it would forget every suppression.
 */

/** Gmail's two domains, which deliver to one mailbox; there alone dots are not part of the mailbox's name. */
const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);

/** The mailbox an address delivers to, in one spelling (lower case, `+tag` dropped, Gmail's aliases folded). */
export function canonicalMailbox(email: string): string {
  const normalised = normaliseEmail(email);
  const at = normalised.lastIndexOf('@');
  const domain = normalised.slice(at + 1);
  // From the first `+` on, unless it comes first: `+tag` alone (an empty mailbox name) is no alias of anything.
  const local = normalised.slice(0, at).replace(/^([^+]+)\+.*$/s, '$1');
  return GMAIL_DOMAINS.has(domain) ? `${local.replaceAll('.', '')}@gmail.com` : `${local}@${domain}`;
}

/** A `+tag` spelling: anyone can make one, some providers do not deliver it; the bare one is its own. */
export function hasPlusTag(email: string): boolean {
  const normalised = normaliseEmail(email);
  return /^[^+]+\+/.test(normalised.slice(0, normalised.lastIndexOf('@')));
}

const PURPOSE = 'goody-mailbox-key-v1';

/** The mailbox's key: 43 base64url characters, a valid Firestore document id. */
export function mailboxKey(secret: string, email: string): string {
  if (!secret) throw new Error('MAILBOX_KEY_SECRET is empty.');
  return createHmac('sha256', derivedKey(secret, PURPOSE, 'mailbox'))
    .update(canonicalMailbox(email), 'utf8')
    .digest('base64url');
}

let processLogKey: string | undefined;

/**
 * The logs' handle key: MAILBOX_KEY_SECRET (Cloud Functions fills the variable for each function that declares
 * it), else one made up per process: never a plain hash.
 */
export function logKeySecret(): string {
  const secret = process.env.MAILBOX_KEY_SECRET;
  if (secret) return secret;
  processLogKey ??= randomBytes(32).toString('base64url');
  return processLogKey;
}
