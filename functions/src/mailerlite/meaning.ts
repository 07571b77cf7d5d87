import {
  type FieldErrors,
  MailerLiteConfiguredGroupError,
  MailerLiteError,
  MailerLiteNetworkError,
  MailerLiteProtocolError,
  MailerLiteTimeoutError,
  MailerLiteValidationError,
} from './errors';

/**
 * What an answer from MailerLite means, decided here and nowhere else: the client's retries, the
 * contact worker's retry or skip, and what the logs say of a failure all ask `classify` (or
 * `failureOf`, below).
 *
 * - `ok`: 2xx, done.
 * - `rate_limited`: 429, a budget is spent; the same request goes through once Retry-After has passed.
 * - `retry`: 408, 5xx, a timeout or a lost connection; the same request may go through later.
 * - `invalid_contact`: a 422 about the address alone; MailerLite will never take this contact.
 * - `group_gone`: a 422 naming `groups.N`: a group id sent no longer exists (deleted, or the account
 *   was emptied); it can be resolved again.
 * - `auth`: 401, the API key is missing, wrong or revoked.
 * - `config`: any other 422 (a field), a 404, or a configured group id that does not exist: the
 *   server's setup, which sending again cannot fix.
 * - `unexpected`: any other 4xx, or an answer not shaped as MailerLite documents.
 */
export type Meaning =
  | 'ok'
  | 'rate_limited'
  | 'retry'
  | 'invalid_contact'
  | 'group_gone'
  | 'auth'
  | 'config'
  | 'unexpected';

/**
 * A 422 field that refuses one element of an upsert's `groups`: MailerLite validates each on its own
 * (Laravel's `groups.*` exists rule) and names it by index, `{"errors": {"groups.0": [...]}}`.
 */
export const REFUSED_GROUP_FIELD = /^groups\.(\d+)$/;

/** The meaning of an HTTP status (with the field errors of a 422), or of an error the client threw. */
export function classify(status: number, errors?: FieldErrors): Meaning;
export function classify(error: MailerLiteError): Meaning;
export function classify(answer: number | MailerLiteError, errors: FieldErrors = {}): Meaning {
  if (typeof answer === 'number') return meaningOfStatus(answer, errors);
  if (answer instanceof MailerLiteTimeoutError || answer instanceof MailerLiteNetworkError) return 'retry';
  if (answer instanceof MailerLiteProtocolError || answer.status === null) return 'unexpected';
  if (answer instanceof MailerLiteConfiguredGroupError) return 'config';
  return meaningOfStatus(answer.status, answer instanceof MailerLiteValidationError ? answer.errors : {});
}

function meaningOfStatus(status: number, errors: FieldErrors): Meaning {
  if (status >= 200 && status < 300) return 'ok';
  if (status === 429) return 'rate_limited';
  if (status === 408 || status >= 500) return 'retry';
  if (status === 401) return 'auth';
  if (status === 404) return 'config';
  if (status !== 422) return 'unexpected';
  const fields = Object.keys(errors);
  if (fields.some((field) => REFUSED_GROUP_FIELD.test(field))) return 'group_gone';
  // About the address alone: the contact's fault. About anything else (a field): our setup, and
  // passing it would lose contacts.
  return fields.length > 0 && fields.every((field) => field === 'email') ? 'invalid_contact' : 'config';
}

/**
 * A failure as the logs name it (`add_contact.failed`'s `code`):
 * - `unavailable`: a retry can fix it (429, 5xx, a timeout, a lost connection);
 * - `failed-precondition`: our setup, which an operator must fix (the key, a group, a field);
 * - `invalid-argument`: MailerLite will never take this address;
 * - `internal`: an answer MailerLite does not document, or no MailerLite error at all.
 */
export type FailureCode = 'unavailable' | 'failed-precondition' | 'invalid-argument' | 'internal';

/** What a request that failed comes to: for the contact worker and the logs. */
export interface Failure {
  /** The same request may go through later: the worker hands its task back to Cloud Tasks. */
  retry: boolean;
  code: FailureCode;
  /**
   * In an operator's words: for `failed-precondition`, what to fix (a param, a group id, MailerLite's
   * refusal); for `invalid-argument`, MailerLite's words on the address. For the logs only.
   */
  message: string;
}

/** The failure an error thrown by the MailerLite client stands for; anything else is `internal`. */
export function failureOf(error: unknown): Failure {
  const meaning = error instanceof MailerLiteError ? classify(error) : 'unexpected';
  switch (meaning) {
    case 'rate_limited':
    case 'retry':
      return failure('unavailable', 'MailerLite is unavailable right now.');
    case 'auth':
      return failure(
        'failed-precondition',
        'The server is not allowed into MailerLite: its API key was refused.',
      );
    case 'invalid_contact':
      return failure('invalid-argument', `MailerLite refused the contact${refusal(error)}`);
    case 'group_gone':
    case 'config':
      if (error instanceof MailerLiteConfiguredGroupError)
        return failure('failed-precondition', error.message);
      return failure(
        'failed-precondition',
        error instanceof MailerLiteValidationError
          ? `MailerLite refused the server's configuration${refusal(error)}`
          : 'A MailerLite group configured for the sign-ups does not exist.',
      );
    default:
      return failure('internal', 'MailerLite gave an answer it does not document.');
  }

  function failure(code: FailureCode, message: string): Failure {
    return { retry: code === 'unavailable', code, message };
  }
}

/** ` (field, field): MailerLite's message` for a 422. */
function refusal(error: unknown): string {
  if (!(error instanceof MailerLiteValidationError)) return '';
  const fields = Object.keys(error.errors);
  return `${fields.length > 0 ? ` (${fields.join(', ')})` : ''}: ${error.apiMessage}`;
}
