import * as functionsLogger from 'firebase-functions/logger';

/** Every log line is a named event, so a query counts them without parsing prose. */
export type LogEvent =
  | 'add_contact.upserted'
  | 'add_contact.moved_to_own_address'
  | 'add_contact.failed'
  | 'add_contact.signup_gone'
  | 'add_contact.erased_during_call'
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
  | 'unsubscribe.enqueue_failed'
  | 'finish_erasure.task_malformed'
  | 'pending_erasures.run'
  | 'reconcile.run'
  | 'reconcile.step_failed'
  | 'retention.erased'
  | 'retention.failed'
  | 'thank_you.sent'
  | 'thank_you.sent_unsaved'
  | 'thank_you.skipped'
  | 'thank_you.budget_reached'
  | 'thank_you.signup_gone'
  | 'thank_you.failed'
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
  | 'sync.finished'
  | 'sync.failed';

/** Counts, codes and masked or keyed addresses only: no nested object, so no request body slips in. */
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
