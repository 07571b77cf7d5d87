import {
  MailerLiteAuthError,
  MailerLiteConfiguredGroupError,
  MailerLiteError,
  MailerLiteNotFoundError,
  MailerLiteValidationError,
} from './errors';

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

/**
 * What an error thrown by the MailerLite client means, decided here only: a 429, 408, 5xx or no answer may go
 * through later; a 422 on the address alone never will; a 401, a 404 or another 422 (a group gone, a field)
 * is our setup's; anything else (another 4xx, an undocumented shape, not the client's error) is `internal`.
 */
export function failureOf(error: unknown): Failure {
  if (error instanceof MailerLiteError && error.transient)
    return failure('unavailable', 'MailerLite is unavailable right now.');
  if (error instanceof MailerLiteAuthError)
    return failure(
      'failed-precondition',
      'The server is not allowed into MailerLite: its API key was refused.',
    );
  if (error instanceof MailerLiteConfiguredGroupError) return failure('failed-precondition', error.message);
  if (error instanceof MailerLiteNotFoundError)
    return failure('failed-precondition', 'A MailerLite group configured for the sign-ups does not exist.');
  if (error instanceof MailerLiteValidationError) {
    const fields = Object.keys(error.errors);
    const refusal = `${fields.length > 0 ? ` (${fields.join(', ')})` : ''}: ${error.apiMessage}`;
    // Anything but the address is our setup: passing it would lose contacts.
    return fields.length > 0 && fields.every((field) => field === 'email')
      ? failure('invalid-argument', `MailerLite refused the contact${refusal}`)
      : failure('failed-precondition', `MailerLite refused the server's configuration${refusal}`);
  }
  return failure('internal', 'MailerLite gave an answer it does not document.');
}

function failure(code: FailureCode, message: string): Failure {
  return { retry: code === 'unavailable', code, message };
}
