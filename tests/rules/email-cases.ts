// The addresses the rules suites and the grammar table judge: the emulator suites (firestore.rules.test.ts,
// email-grammar.test.ts) through the real rules, the offline check (tests/stack/firestore-rules-offline.test.ts)
// through the rules' own patterns, and email-grammar.test.ts through the functions' grammar too
// (contract/src/email.ts). One list, so the three keep standing for one another.

/** An accepted address of exactly `length` characters (at least 70): a 64-character local part, then
 *  labels of at most 63 characters ending in `.com`. */
export function addressOfLength(length: number): string {
  const local = 'a'.repeat(64);
  // Characters left for the labels before `.com` and the dots between them.
  let left = length - local.length - 1 - '.com'.length;
  const labels: string[] = [];
  while (left > 63) {
    const take = left === 64 ? 62 : 63; // never leave a dot with no label after it
    labels.push('d'.repeat(take));
    left -= take + 1;
  }
  labels.push('d'.repeat(left));
  return `${local}@${labels.join('.')}.com`;
}

/** Shaped like addresses the form's <input type="email"> accepts: plus tags, subdomains, digits, hyphens,
 *  upper case, an apostrophe, a 63-character domain label. */
export const addressesTheFormAccepts = [
  'teen+goody@mail.example.co.uk',
  'Teen.Name@Example.COM',
  'x_1@my-school.org',
  "o'brien@example.ie",
  `teen@${'d'.repeat(63)}.example`,
  'a@b.c',
  'kid@xn--bcher-kva.example',
  `${'a'.repeat(64)}@example.com`,
];

/** Not shaped like an address (whatever their length). */
export const malformedAddresses = [
  '',
  'a@',
  'not-an-address',
  'teen@',
  '@example.com',
  'teen@@example.com',
  'teen@exam@ple.com',
  'teen @example.com',
  ' teen@example.com',
  'teen@exam ple.com',
  'teen@example..com',
  'teen@-example.com',
  'teen@example-.com',
  'teen@example.com\n',
  '<script>@example.com',
  'tëen@example.com',
  `teen@${'d'.repeat(64)}.example`,
];

/** What the form lets through but no mailbox can be: refused by the rules and the functions alike. */
export const addressesNoMailboxCanBe = [
  'kid@localhost',
  'a@b',
  'a..b@example.com',
  '.kid@example.com',
  'kid.@example.com',
  `${'a'.repeat(65)}@example.com`,
  'kid@example.123',
  'kid@127.0.0.1',
];

/** Every address above with the verdict the grammar gives it, and the length bounds beside them. */
export const emailGrammarTable: ReadonlyArray<readonly [address: string, accepted: boolean]> = [
  ...addressesTheFormAccepts.map((address) => [address, true] as const),
  [addressOfLength(254), true],
  ...malformedAddresses.map((address) => [address, false] as const),
  ...addressesNoMailboxCanBe.map((address) => [address, false] as const),
  [`a${addressOfLength(254)}`, false],
];
