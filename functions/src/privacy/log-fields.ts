import type { LogFields } from '../logs';
import { logKeySecret, mailboxKey } from './mailbox-key';

// How an address appears in the logs (logs.ts): masked for a reader, and a keyed handle to match lines and
// records by. Here, beside the mailbox key it is made from, so the logger itself knows nothing of keys.

/**
 * A stable handle for an address (of a minor, often) that no list of candidate addresses can confirm: the
 * first 12 characters of its mailbox key (privacy/mailbox-key.ts, an HMAC with MAILBOX_KEY_SECRET). The
 * same key names the thank-you record and the suppression entry, so an operator can match a log line to
 * them without the address ever being written down; every spelling of one mailbox has one handle.
 */
export function emailHash(normalisedEmail: string): string {
  return mailboxKey(logKeySecret(), normalisedEmail).slice(0, 12);
}

/**
 * `j***@g***.com`: enough for an operator to tell a typo domain from a real one, too little to
 * identify anyone.
 */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '***';
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  const dot = domain.lastIndexOf('.');
  const host = dot > 0 ? domain.slice(0, dot) : domain;
  const tld = dot > 0 ? domain.slice(dot) : '';
  return `${local[0]}***@${host[0] ?? ''}***${tld}`;
}

/** The two forms every event about an address carries. */
export function emailFields(normalisedEmail: string): LogFields {
  return { email_masked: maskEmail(normalisedEmail), email_hash: emailHash(normalisedEmail) };
}
