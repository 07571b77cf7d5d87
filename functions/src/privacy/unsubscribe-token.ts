import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { emailProblem, normaliseEmail } from '../contract';
import { derivedKey } from '../derived-key';

/**
 * The link carries `a`, the address as typed sealed with AES-256-GCM (so no table maps tokens to addresses),
 * and `t`, an HMAC of the normalised address checked against it (a link erases only its own address).
 * Rotating UNSUBSCRIBE_SECRET voids every link sent.
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

function mac(secret: string, email: string): Buffer {
  return createHmac('sha256', derivedKey(secret, SALT, 'mac'))
    .update(normaliseEmail(email), 'utf8')
    .digest();
}

export function unsubscribeToken(secret: string, emailAsTyped: string): UnsubscribeToken {
  if (!secret) throw new Error('UNSUBSCRIBE_SECRET is empty.');
  const typed = emailAsTyped.trim();
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', derivedKey(secret, SALT, 'seal'), iv);
  const sealed = Buffer.concat([iv, cipher.update(typed, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return { a: sealed.toString('base64url'), t: mac(secret, typed).toString('base64url') };
}

/** The https link for the mail's header and footer: `<base>?a=…&t=…`. */
export function unsubscribeLink(baseUrl: string, secret: string, emailAsTyped: string): string {
  const url = new URL(baseUrl);
  for (const [name, value] of Object.entries(unsubscribeToken(secret, emailAsTyped))) {
    url.searchParams.set(name, value);
  }
  return url.toString();
}

/**
 * The address a link was made for, or null for a tampered, truncated or foreign link: `emailAsTyped` as typed
 * when signing up, trimmed (the form the sign-up was most likely stored in), and `email` normalised (the form
 * MailerLite and the hashes use).
 */
export function openUnsubscribeToken(secret: string, a: unknown, t: unknown) {
  if (!secret || typeof a !== 'string' || typeof t !== 'string') return null;
  if (a.length > MAX_SEALED_CHARS || !BASE64URL.test(a) || t.length !== 43 || !BASE64URL.test(t)) return null;
  const sealed = Buffer.from(a, 'base64url');
  if (sealed.length <= IV_BYTES + TAG_BYTES) return null;
  let typed: string;
  try {
    const seal = derivedKey(secret, SALT, 'seal');
    const decipher = createDecipheriv('aes-256-gcm', seal, sealed.subarray(0, IV_BYTES));
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
