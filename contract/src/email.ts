/**
 * The one grammar of an e-mail address the product accepts, written once for the functions and the
 * tests. firestore.rules cannot import it: its isEmailAddress spells the same checks in RE2, and
 * tests/rules/email-grammar.test.ts runs one table of addresses through both (the rules on the Firestore
 * emulator), so a row the database stores is always one every function can sync, thank and erase.
 *
 * It is the WHATWG "valid e-mail address" (what the page's `<input type="email">` lets through: ASCII
 * only, an internationalised domain in its `xn--` form), narrowed where the browser lets through what no
 * mailbox can be: the local part is an RFC 5321 dot-atom of at most 64 characters (no dot at either end,
 * none twice in a row), the domain has at least two labels and its last one is not all digits.
 * Addresses with a Unicode local part (RFC 6531) are refused on purpose: browsers do not submit them,
 * MailerLite and most SMTP relays cannot deliver them, and two visually identical addresses could be
 * two people.
 */

/** The longest address SMTP can carry (RFC 5321's path limit minus the angle brackets). */
export const EMAIL_MAX_LENGTH = 254;
export const LOCAL_PART_MAX_LENGTH = 64;

const ATOM = "[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+";
const LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
/** Dot-atom local part, then a domain of two labels or more (firestore.rules has the same pattern). */
const ADDRESS = new RegExp(`^${ATOM}(?:\\.${ATOM})*@${LABEL}(?:\\.${LABEL})+$`);
const NUMERIC_TOP_LABEL = /\.[0-9]+$/;
// C0, DEL, C1, and the Unicode line/paragraph separators that break log lines and mail headers.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's job.
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point of this pattern is to match anything outside printable ASCII.
const NON_ASCII = /[^\u0000-\u007f]/;

export type EmailProblem = 'type' | 'length' | 'control' | 'unicode' | 'format';

/**
 * Why `value` is not an address the product accepts, or null when it is one. The value is judged as
 * it is: the callables trim what they are sent first (as the browser does with an email field's
 * value), the database stores the address as the page sent it.
 */
export function emailProblem(value: unknown): EmailProblem | null {
  if (typeof value !== 'string') return 'type';
  if (value.length > EMAIL_MAX_LENGTH) return 'length';
  if (CONTROL_CHARACTERS.test(value)) return 'control';
  if (NON_ASCII.test(value)) return 'unicode';
  if (!ADDRESS.test(value) || NUMERIC_TOP_LABEL.test(value)) return 'format';
  if (value.indexOf('@') > LOCAL_PART_MAX_LENGTH) return 'format';
  return null;
}

/**
 * The one form of an address used for deduplication, keys and MailerLite: trimmed and lower-cased.
 * Mail providers treat the local part case-insensitively, and so does MailerLite.
 */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}
