import { HttpsError } from 'firebase-functions/v2/https';
import {
  MailerLiteAuthError,
  MailerLiteConfiguredGroupError,
  MailerLiteError,
  MailerLiteNotFoundError,
  MailerLiteValidationError,
} from './errors';

/**
 * What a caller of a callable is told when MailerLite fails. The sign-up is already stored when the
 * page calls add-contact, so "unavailable" says: nothing is lost, the next sync delivers it.
 */
export function mailerLiteHttpsError(error: unknown): HttpsError {
  if (error instanceof HttpsError) return error;
  if (error instanceof MailerLiteConfiguredGroupError) {
    return new HttpsError('failed-precondition', error.message);
  }
  if (error instanceof MailerLiteValidationError) {
    const fields = Object.keys(error.errors);
    const about = fields.length > 0 ? ` (${fields.join(', ')})` : '';
    // About the address: the caller's input. About anything else (a group id, a field): our setup.
    return fields.length > 0 && fields.every((field) => field === 'email')
      ? new HttpsError('invalid-argument', `MailerLite refused the contact${about}: ${error.apiMessage}`)
      : new HttpsError(
          'failed-precondition',
          `MailerLite refused the server's configuration${about}: ${error.apiMessage}`,
        );
  }
  if (error instanceof MailerLiteAuthError) {
    return new HttpsError(
      'failed-precondition',
      'The server is not allowed into MailerLite: its API key was refused.',
    );
  }
  if (error instanceof MailerLiteNotFoundError) {
    return new HttpsError(
      'failed-precondition',
      'A MailerLite group configured for the sign-ups does not exist.',
    );
  }
  if (error instanceof MailerLiteError && error.transient) {
    return new HttpsError(
      'unavailable',
      'MailerLite is unavailable right now. The sign-up is stored, and the next sync will deliver it.',
    );
  }
  return new HttpsError('internal', 'MailerLite could not take the contact. The sign-up is stored.');
}
