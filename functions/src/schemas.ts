import { HttpsError } from 'firebase-functions/v2/https';
import {
  type CallableName,
  EMAIL_MAX_LENGTH,
  type EmailProblem,
  emailProblem,
  normaliseEmail,
  type SignupSource,
  SOURCES,
  SUBSCRIPTION_TYPES,
  type SubscriptionType,
  subscriptionTypeOf,
} from './contract';
import type { Logger } from './logs';

// Input is checked here, at the boundary, before anything reaches MailerLite, SMTP or Firestore.
// Every refusal is `invalid-argument` with a message that names the field.

const EMAIL_PROBLEM_MESSAGES: Record<EmailProblem, string> = {
  type: 'must be a string',
  length: `must be at most ${EMAIL_MAX_LENGTH} characters`,
  control: 'must not contain control characters',
  unicode: 'must use ASCII characters only (an internationalised domain goes in its xn-- form)',
  format: 'must be an e-mail address like name@example.com',
};

function invalid(message: string): HttpsError {
  return new HttpsError('invalid-argument', message);
}

/** A field name safe to echo in a message: short, printable, quoted. */
function quoteField(name: string): string {
  const printable = name.replace(/[^\x20-\x7e]/g, '?');
  return JSON.stringify(printable.length > 40 ? `${printable.slice(0, 40)}...` : printable);
}

function requireObject(data: unknown, expected: string): Record<string, unknown> {
  if (Array.isArray(data)) throw invalid(`The request must be an object with ${expected}, not an array.`);
  if (typeof data !== 'object' || data === null)
    throw invalid(`The request must be an object with ${expected}.`);
  return data as Record<string, unknown>;
}

function rejectUnknownFields(data: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(data)) {
    if (!allowed.includes(key)) throw invalid(`Unexpected field ${quoteField(key)}.`);
  }
}

function parseEmail(data: Record<string, unknown>): string {
  if (!('email' in data) || data.email === undefined) throw invalid('email is required.');
  // Surrounding spaces are trimmed first, as the browser trims an email field's value; a control
  // character anywhere is refused.
  const raw = data.email;
  const problem =
    emailProblem(raw) === 'control' ? 'control' : emailProblem(typeof raw === 'string' ? raw.trim() : raw);
  if (problem) throw invalid(`email ${EMAIL_PROBLEM_MESSAGES[problem]}.`);
  return normaliseEmail(data.email as string);
}

function parseEnum<T extends string>(value: unknown, field: string, allowed: readonly T[]): T {
  if (typeof value !== 'string') throw invalid(`${field} must be a string, one of ${allowed.join(', ')}.`);
  if (!(allowed as readonly string[]).includes(value))
    throw invalid(`${field} must be one of ${allowed.join(', ')}.`);
  return value as T;
}

/** Runs a parser at a callable's boundary; a refusal is logged without input or message (an address). */
export function validated<T>(
  callable: CallableName,
  logger: Logger,
  parse: (data: unknown) => T,
  data: unknown,
): T {
  try {
    return parse(data);
  } catch (error) {
    logger.warn('input.rejected', { callable });
    throw error;
  }
}

export interface AddContactInput {
  /** Normalised. */
  email: string;
  /** As sent, trimmed: the form in which the sign-up was stored (the thank-you goes to it). */
  emailAsSent: string;
  source: SignupSource;
  subscriptionType: SubscriptionType;
}

export function parseAddContactInput(data: unknown): AddContactInput {
  const body = requireObject(data, 'email and source');
  rejectUnknownFields(body, ['email', 'source', 'subscription_type']);
  const email = parseEmail(body);
  if (body.source === undefined) throw invalid('source is required.');
  const source = parseEnum(body.source, 'source', SOURCES);
  // The hero form sends no type; the pairing gives it its list.
  const subscriptionType =
    body.subscription_type === undefined
      ? subscriptionTypeOf('hero_form')
      : parseEnum(body.subscription_type, 'subscription_type', SUBSCRIPTION_TYPES);
  if (subscriptionTypeOf(source) !== subscriptionType) {
    throw invalid(
      body.subscription_type === undefined
        ? `subscription_type is required with source ${source}.`
        : `subscription_type ${subscriptionType} does not go with source ${source}.`,
    );
  }
  return { email, emailAsSent: (body.email as string).trim(), source, subscriptionType };
}

export interface ThankYouInput {
  /** Normalised. */
  email: string;
  /** As sent, trimmed: the form in which the sign-up was most likely stored. */
  emailAsSent: string;
}

export function parseThankYouInput(data: unknown): ThankYouInput {
  const body = requireObject(data, 'email');
  rejectUnknownFields(body, ['email']);
  const email = parseEmail(body);
  return { email, emailAsSent: (body.email as string).trim() };
}

export function parseSyncInput(data: unknown): void {
  if (data === null || data === undefined) return;
  if (typeof data !== 'object' || Array.isArray(data)) throw invalid('The sync takes no arguments.');
  const keys = Object.keys(data);
  if (keys.length > 0)
    throw invalid(`The sync takes no arguments; unexpected field ${quoteField(keys[0] ?? '')}.`);
}
