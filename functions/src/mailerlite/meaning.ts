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
 * What a MailerLite answer means, decided here only: `rate_limited` (429) and `retry` (408, 5xx, no answer)
 * may go through later; `invalid_contact` (a 422 on the address alone) never will; `group_gone` (a 422 on
 * `groups.N`) can be resolved again; `auth` (401), `config` (another 422, a 404) and `unexpected` (another
 * 4xx, an undocumented shape) are our setup's.
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

/** A 422 field refusing one element of `groups`, named by index (Laravel's `groups.*` rule). */
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
  // Anything but the address is our setup: passing it would lose contacts.
  return fields.length > 0 && fields.every((field) => field === 'email') ? 'invalid_contact' : 'config';
}

/** A failure as logged: `unavailable`, `failed-precondition` (our setup), `invalid-argument`, `internal`. */
export type FailureCode = 'unavailable' | 'failed-precondition' | 'invalid-argument' | 'internal';

/** What a request that failed comes to: for the contact worker and the logs. */
export interface Failure {
  /** The same request may go through later: the worker hands its task back to Cloud Tasks. */
  retry: boolean;
  code: FailureCode;
  /** What to fix, or MailerLite's words on the address: for the logs only. */
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
