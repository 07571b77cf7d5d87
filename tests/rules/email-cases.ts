// The addresses both rules suites judge: the emulator suite (firestore.rules.test.ts) through the real
// rules, and the offline check (tests/stack/firestore-rules-offline.test.ts) through the rules' own pattern.
// One list, so the offline check keeps standing for what the emulator suite proves.

/** Shaped like addresses the form's <input type="email"> accepts: plus tags, subdomains, digits, hyphens,
 *  upper case, an apostrophe, a 63-character domain label. */
export const addressesTheFormAccepts = [
  'teen+goody@mail.example.co.uk',
  'Teen.Name@Example.COM',
  'x_1@my-school.org',
  "o'brien@example.ie",
  `teen@${'d'.repeat(63)}.example`,
];

/** Not shaped like an address (whatever their length). */
export const malformedAddresses = [
  'not-an-address',
  'teen@',
  '@example.com',
  'teen@@example.com',
  'teen@exam@ple.com',
  'teen @example.com',
  'teen@exam ple.com',
  'teen@example..com',
  'teen@-example.com',
  'teen@example-.com',
  'teen@example.com\n',
  '<script>@example.com',
  'tëen@example.com',
  `teen@${'d'.repeat(64)}.example`,
];
