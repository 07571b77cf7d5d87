import type { LogFields } from '../logs';
import { logKeySecret, mailboxKey } from './mailbox-key';

// How an address appears in the logs: masked, and a keyed handle to match lines and records by.

/** `j***@g***.com`: enough to tell a typo domain, too little to identify anyone. */
function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '***';
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  const dot = domain.lastIndexOf('.');
  const host = dot > 0 ? domain.slice(0, dot) : domain;
  const tld = dot > 0 ? domain.slice(dot) : '';
  return `${local[0]}***@${host[0] ?? ''}***${tld}`;
}

/**
 * The two forms every event about an address carries; the handle is the mailbox key's first 12 characters:
 * it matches the records, and no list of addresses confirms it.
 */
export function emailFields(normalisedEmail: string): LogFields {
  return {
    email_masked: maskEmail(normalisedEmail),
    email_hash: mailboxKey(logKeySecret(), normalisedEmail).slice(0, 12),
  };
}
