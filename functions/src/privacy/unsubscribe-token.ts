import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { emailProblem, normaliseEmail } from '../contract';
import { derivedKey } from '../derived-key';

/**
 * The one-click unsubscribe link carries two values, neither of which shows the address:
 *
 * - `a`: the address as it was typed, sealed with AES-256-GCM. The function needs the address itself
 *   to delete the sign-ups (stored as typed, found by an equality query) and the MailerLite subscriber
 *   (found by address), and sealing it in the link means nothing new is stored to map a token back to
 *   an address: no lookup table of addresses a breach could leak.
 * - `t`: HMAC-SHA256 of the normalised address. It is checked against the address the seal opens to,
 *   so a link only erases the address it was made for, and a link made with another secret (another
 *   deployment, a forger) opens to nothing.
 *
 * Both keys are derived from UNSUBSCRIBE_SECRET with HKDF, one per purpose. Rotating the secret makes
 * every link already sent invalid; the page then says how to leave by e-mail.
 */

const SALT = 'goody-unsubscribe-v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
// An address is at most 254 characters: its seal is at most 282 bytes, 376 in base64url.
const MAX_SEALED_CHARS = 400;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export interface UnsubscribeToken {
  a: string;
  t: string;
}

export interface OpenedToken {
  /** As typed when signing up, trimmed: the form the sign-up was most likely stored in. */
  emailAsTyped: string;
  /** Normalised: the form MailerLite and the hashes use. */
  email: string;
}

function key(secret: string, purpose: 'seal' | 'mac'): Buffer {
  return derivedKey(secret, SALT, purpose);
}

function mac(secret: string, email: string): Buffer {
  return createHmac('sha256', key(secret, 'mac')).update(normaliseEmail(email), 'utf8').digest();
}

export function unsubscribeToken(secret: string, emailAsTyped: string): UnsubscribeToken {
  if (!secret) throw new Error('UNSUBSCRIBE_SECRET is empty.');
  const typed = emailAsTyped.trim();
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key(secret, 'seal'), iv);
  const sealed = Buffer.concat([iv, cipher.update(typed, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return { a: sealed.toString('base64url'), t: mac(secret, typed).toString('base64url') };
}

/** The https link for the mail's header and footer: `<base>?a=…&t=…`. */
export function unsubscribeLink(baseUrl: string, secret: string, emailAsTyped: string): string {
  const url = new URL(baseUrl);
  const { a, t } = unsubscribeToken(secret, emailAsTyped);
  url.searchParams.set('a', a);
  url.searchParams.set('t', t);
  return url.toString();
}

/** The address a link was made for, or null for a tampered, truncated or foreign link. */
export function openUnsubscribeToken(secret: string, a: unknown, t: unknown): OpenedToken | null {
  if (!secret || typeof a !== 'string' || typeof t !== 'string') return null;
  if (a.length > MAX_SEALED_CHARS || !BASE64URL.test(a) || t.length !== 43 || !BASE64URL.test(t)) return null;
  const sealed = Buffer.from(a, 'base64url');
  if (sealed.length <= IV_BYTES + TAG_BYTES) return null;
  let typed: string;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key(secret, 'seal'), sealed.subarray(0, IV_BYTES));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    typed = Buffer.concat([
      decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    return null;
  }
  const expected = mac(secret, typed);
  const given = Buffer.from(t, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  if (emailProblem(typed) !== null) return null;
  return { emailAsTyped: typed, email: normaliseEmail(typed) };
}
