// What the functions' tests expect of a callable's boundary: its refusal, and the bodies it must refuse.

import { HttpsError } from 'firebase-functions/v2/https';
import { expect } from 'vitest';

/** Awaits a call expected to fail with an HttpsError of `code`; returns the error. */
export async function expectHttpsError(
  call: Promise<unknown>,
  code: HttpsError['code'],
): Promise<HttpsError> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error, `expected an HttpsError ${code}`).toBeInstanceOf(HttpsError);
  expect((error as HttpsError).code).toBe(code);
  return error as HttpsError;
}

/**
 * Bodies every callable must refuse as invalid-argument: missing, wrong types, arrays, objects,
 * 10 kB strings, control characters, a non-address, and Unicode addresses.
 */
export const BAD_EMAILS: Array<[string, unknown]> = [
  ['a number', 42],
  ['a boolean', true],
  ['null', null],
  ['an array', ['kid@example.com']],
  ['an object', { address: 'kid@example.com' }],
  ['a 10 kB string', `${'a'.repeat(10_240)}@example.com`],
  [
    'an address of 255 characters',
    `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`,
  ],
  ['a newline (header injection)', 'kid@example.com\nBcc: everyone@example.com'],
  ['a NUL byte', 'kid@example.com\u0000'],
  ['a tab', 'kid\t@example.com'],
  ['a line separator', 'kid@example.com\u2028'],
  ['no @', 'kid.example.com'],
  ['two @', 'kid@@example.com'],
  ['no domain dot', 'kid@localhost'],
  ['an empty string', ''],
  ['spaces only', '   '],
  ['a display name', 'Kid <kid@example.com>'],
  ['a double dot', 'kid..teen@example.com'],
  ['a numeric top-level domain', 'kid@example.123'],
  ['a Unicode local part', 'élève@example.com'],
  ['a Unicode domain', 'kid@bücher.example'],
  ['Cyrillic look-alike letters', 'kid@еxample.com'],
  ['an emoji', 'kid😀@example.com'],
  ['a full-width @', 'kid＠example.com'],
];
