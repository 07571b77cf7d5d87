import { HttpsError } from 'firebase-functions/v2/https';
import { MailerLiteConfiguredGroupError, MailerLiteError, MailerLiteValidationError } from './errors';
import { classify } from './meaning';

/**
 * What a caller of a callable is told when MailerLite fails. The sign-up is already stored when the
 * page calls add-contact, so "unavailable" says: nothing is lost, the next sync delivers it.
 */
export function mailerLiteHttpsError(error: unknown): HttpsError {
  if (error instanceof HttpsError) return error;
  const meaning = error instanceof MailerLiteError ? classify(error) : 'unexpected';
  switch (meaning) {
    case 'rate_limited':
    case 'retry':
      return new HttpsError(
        'unavailable',
        'MailerLite is unavailable right now. The sign-up is stored, and the next sync will deliver it.',
      );
    case 'auth':
      return new HttpsError(
        'failed-precondition',
        'The server is not allowed into MailerLite: its API key was refused.',
      );
    case 'invalid_contact':
      return new HttpsError('invalid-argument', `MailerLite refused the contact${refusal(error)}`);
    case 'group_gone':
    case 'config':
      if (error instanceof MailerLiteConfiguredGroupError) {
        return new HttpsError('failed-precondition', error.message);
      }
      if (error instanceof MailerLiteValidationError) {
        return new HttpsError(
          'failed-precondition',
          `MailerLite refused the server's configuration${refusal(error)}`,
        );
      }
      return new HttpsError(
        'failed-precondition',
        'A MailerLite group configured for the sign-ups does not exist.',
      );
    default:
      return new HttpsError('internal', 'MailerLite could not take the contact. The sign-up is stored.');
  }
}

/** ` (field, field): MailerLite's message` for a 422. */
function refusal(error: unknown): string {
  if (!(error instanceof MailerLiteValidationError)) return '';
  const fields = Object.keys(error.errors);
  return `${fields.length > 0 ? ` (${fields.join(', ')})` : ''}: ${error.apiMessage}`;
}
