// The two keys the functions derive from: UNSUBSCRIBE_SECRET (the one-click links) and MAILBOX_KEY_SECRET (the
// mailbox keys of the stored sign-ups, the suppression list and the logs' handles). Both must be set and long
// enough; MAILBOX_KEY_SECRET must be the key the stored sign-ups were keyed with, or every unsubscribe is
// forgotten. That is read by keying a few rows' addresses in this process and comparing with their stored
// `mailbox_key`: no address, key or secret is printed.

import type { Firestore } from 'firebase-admin/firestore';
import { COLLECTIONS } from '../../contract/src/index.ts';
import { mailboxKey } from '../../functions/src/privacy/mailbox-key.ts';
import { MAILBOX_KEY_FIELD } from '../../functions/src/signups/lookup.ts';
import { type CheckResult, cannotTell, fail, messageOf, pass } from './report.ts';

/** As params.ts asks: a random string of at least 32 bytes. */
const SHORTEST = 32;
/** Rows read to compare keys. */
const SAMPLE = 20;

const setIt = (name: string) =>
  `npx firebase functions:secrets:set ${name} --project <id>, with the output of: openssl rand -base64 48`;

export function checkSecretPresent(name: string, value: string | undefined): CheckResult | null {
  if (!value) return fail(`key: ${name}`, `${name} is not set`, setIt(name));
  if (Buffer.byteLength(value, 'utf8') < SHORTEST) {
    return fail(`key: ${name}`, `${name} is shorter than ${SHORTEST} bytes`, setIt(name));
  }
  return null;
}

export function checkUnsubscribeSecret(value: string | undefined): CheckResult {
  return (
    checkSecretPresent('UNSUBSCRIBE_SECRET', value) ??
    pass('key: UNSUBSCRIBE_SECRET', `set, ${SHORTEST} bytes or more`)
  );
}

export async function checkMailboxKeySecret(
  value: string | undefined,
  db: Firestore | null,
  unavailable?: string,
): Promise<CheckResult> {
  const name = 'key: MAILBOX_KEY_SECRET';
  const missing = checkSecretPresent('MAILBOX_KEY_SECRET', value);
  if (missing || !value) return missing as CheckResult;
  if (!db) {
    return cannotTell(
      name,
      `set; whether the stored sign-ups were keyed with it cannot be read: ${unavailable ?? 'no database'}`,
    );
  }
  let rows: Array<{ email: unknown; key: unknown }>;
  try {
    const snapshot = await db
      .collection(COLLECTIONS.signups)
      .select('email', MAILBOX_KEY_FIELD)
      .limit(SAMPLE)
      .get();
    rows = snapshot.docs.map((doc) => ({ email: doc.get('email'), key: doc.get(MAILBOX_KEY_FIELD) }));
  } catch (error) {
    return cannotTell(name, `set; cannot read ${COLLECTIONS.signups}: ${messageOf(error)}`);
  }
  const keyed = rows.filter(
    (row): row is { email: string; key: string } =>
      typeof row.email === 'string' && typeof row.key === 'string',
  );
  if (keyed.length === 0) return pass(name, 'set; no stored sign-up carries a mailbox key yet');
  const matches = keyed.filter((row) => {
    try {
      return mailboxKey(value, row.email) === row.key;
    } catch {
      return false;
    }
  }).length;
  if (matches === keyed.length) {
    return pass(name, `set, and the key ${keyed.length} stored sign-up(s) were keyed with`);
  }
  return fail(
    name,
    `${keyed.length - matches} of ${keyed.length} stored sign-ups read were keyed with another MAILBOX_KEY_SECRET: unsubscribes and thank-you records made under it are not found`,
    'set MAILBOX_KEY_SECRET back to the value it had when those sign-ups were made (never rotate it): npx firebase functions:secrets:set MAILBOX_KEY_SECRET --project <id>',
  );
}
