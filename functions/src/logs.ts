import { createHash } from 'node:crypto';
import * as functionsLogger from 'firebase-functions/logger';
import { logKeySecret, mailboxKey } from './privacy/mailbox-key';

/**
 * Every log line the functions write is one of these named events, so a log query can count them
 * (`jsonPayload.event="sync.finished"`) without parsing prose.
 */
export type LogEvent =
  | 'add_contact.upserted'
  | 'add_contact.failed'
  | 'add_contact.refused_unknown_address'
  | 'add_contact.erased_during_call'
  | 'add_contact.enqueue_failed'
  | 'add_contact.task_malformed'
  | 'add_contact.suppressed'
  | 'add_contact.already_delivered'
  | 'signup.enqueued'
  | 'signup.not_indexed'
  | 'unsubscribe.erased'
  | 'unsubscribe.repeated'
  | 'unsubscribe.rate_limited'
  | 'unsubscribe.refused_token'
  | 'unsubscribe.failed'
  | 'unsubscribe.forget_pending'
  | 'unsubscribe.erasure_pending'
  | 'pending_erasures.run'
  | 'pending_erasures.failed'
  | 'retention.erased'
  | 'retention.failed'
  | 'thank_you.sent'
  | 'thank_you.skipped'
  | 'thank_you.budget_reached'
  | 'thank_you.refused_unknown_address'
  | 'thank_you.failed'
  | 'thank_you.enqueue_failed'
  | 'thank_you.task_malformed'
  | 'thank_you.not_configured'
  | 'input.rejected'
  | 'app_check.refused'
  | 'mailerlite.retry'
  | 'mailerlite.group_re_resolved'
  | 'sync.started'
  | 'sync.refused_running'
  | 'sync.refused_too_soon'
  | 'sync.lease_taken_over'
  | 'sync.batch_confirmed'
  | 'sync.contact_rejected'
  | 'sync.signup_skipped'
  | 'sync.erased_contact_skipped'
  | 'sync.erased_contact_forgotten'
  | 'sync.rate_limited'
  | 'sync.finished'
  | 'sync.failed';

/**
 * Fields carry counts, codes and masked or hashed addresses only. The type keeps nested objects
 * out, so a whole request body (with an address or a key in it) cannot be logged by accident.
 */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  info(event: LogEvent, fields?: LogFields): void;
  warn(event: LogEvent, fields?: LogFields): void;
  error(event: LogEvent, fields?: LogFields): void;
}

/** Cloud Logging's structured form: `message` is the event name, the fields land in jsonPayload. */
export const cloudLogger: Logger = {
  info: (event, fields) => functionsLogger.write({ severity: 'INFO', message: event, event, ...fields }),
  warn: (event, fields) => functionsLogger.write({ severity: 'WARNING', message: event, event, ...fields }),
  error: (event, fields) => functionsLogger.write({ severity: 'ERROR', message: event, event, ...fields }),
};

/**
 * A stable handle for an address (of a minor, often) that no list of candidate addresses can confirm: the
 * first 12 characters of its mailbox key (privacy/mailbox-key.ts, an HMAC with MAILBOX_KEY_SECRET). The
 * same key names the thank-you record and the suppression entry, so an operator can match a log line to
 * them without the address ever being written down; every spelling of one mailbox has one handle.
 */
export function emailHash(normalisedEmail: string): string {
  return mailboxKey(logKeySecret(), normalisedEmail).slice(0, 12);
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
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
