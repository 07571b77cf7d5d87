import { createHmac, randomBytes } from 'node:crypto';
import { normaliseEmail } from '../contract';
import { derivedKey } from '../derived-key';

/**
 * "The same person", as the product counts them: one mailbox, however its address is spelled. Every
 * address is lower-cased (providers and MailerLite ignore case), a `+tag` is dropped on every domain
 * (`kid+x@school.org` is `kid@school.org`: Google Workspace, Microsoft 365 unless its administrator turned
 * it off, Gmail, Outlook.com, iCloud, Proton and Fastmail deliver it there; where a domain does not, the
 * fold only means mailing less), and Gmail's dots and googlemail.com are folded too
 * (`Kid.Teen+goody@googlemail.com` is `kidteen@gmail.com`). A bot that signs one mailbox up under twelve
 * spellings is then one mailbox: one thank-you, one suppression entry when it unsubscribes, one set of
 * rows to erase. What is folded and what is deliberately not, and why: docs/security/abuse.md ("Which
 * spellings are one mailbox").
 *
 * The key is an HMAC of that canonical mailbox with MAILBOX_KEY_SECRET (HKDF-derived for this one
 * purpose), never a plain hash: a plain SHA-256 of an address is confirmed by anyone holding a list of
 * candidate addresses. It names the thank-you record and the suppression entry and is written on each
 * sign-up (`mailbox_key`, by delivery/index-signup.ts), and its first 12 characters are the address's handle
 * in the logs. The secret must never be rotated: a new one would forget every suppression.
 */

/** The domain Gmail's other domain delivers to; there alone dots are not part of the mailbox's name. */
const GMAIL = 'gmail.com';
const GMAIL_DOMAINS: ReadonlySet<string> = new Set([GMAIL, 'googlemail.com']);

/** The mailbox an address delivers to, in one spelling (lower case, `+tag` dropped, Gmail's aliases folded). */
export function canonicalMailbox(email: string): string {
  const normalised = normaliseEmail(email);
  const at = normalised.lastIndexOf('@');
  let local = normalised.slice(0, at);
  let domain = normalised.slice(at + 1);
  const plus = local.indexOf('+');
  // `+tag` alone (an empty mailbox name) is not an alias of anything: keep it as it is.
  if (plus > 0) local = local.slice(0, plus);
  if (GMAIL_DOMAINS.has(domain)) {
    local = local.replaceAll('.', '');
    domain = GMAIL;
  }
  return `${local}@${domain}`;
}

/**
 * Whether the address carries a `+tag` (`kid+x@school.org`): a spelling a stranger can make of anyone's
 * mailbox, which some providers do not deliver. The bare spelling (`kid@school.org`, or a dotted Gmail) is
 * the mailbox's own: it gets its own thank-you after a tagged one (delivery/deliver-thank-you.ts) and becomes
 * the MailerLite contact's address (privacy/mailerlite-contacts.ts).
 */
export function hasPlusTag(email: string): boolean {
  const normalised = normaliseEmail(email);
  return normalised.slice(0, normalised.lastIndexOf('@')).indexOf('+') > 0;
}

const PURPOSE = 'goody-mailbox-key-v1';

/** The mailbox's key: 43 base64url characters, a valid Firestore document id. */
export function mailboxKey(secret: string, email: string): string {
  const mailbox = canonicalMailbox(email);
  return keyOf(secret, mailbox);
}

function keyOf(secret: string, mailbox: string): string {
  if (!secret) throw new Error('MAILBOX_KEY_SECRET is empty.');
  return createHmac('sha256', derivedKey(secret, PURPOSE, 'mailbox'))
    .update(mailbox, 'utf8')
    .digest('base64url');
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
