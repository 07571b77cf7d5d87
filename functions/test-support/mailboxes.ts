// One Gmail mailbox under twelve spellings (dots, +tags, googlemail.com, case), as a bot would sign it up:
// the thank-you tests and `npm run bench:abuse` hold the product to one mail for all of them.
export const ONE_MAILBOX = 'kidteen@gmail.com';
export const ONE_MAILBOX_SPELLINGS = [
  'kidteen@gmail.com',
  'kid.teen@gmail.com',
  'Kid.Teen@Gmail.com',
  'k.i.d.t.e.e.n@gmail.com',
  'kidteen+goody@gmail.com',
  'kid.teen+1@gmail.com',
  'KIDTEEN+launch@gmail.com',
  'kidteen@googlemail.com',
  'kid.teen@googlemail.com',
  'kidteen+x@googlemail.com',
  'k.idteen+y@GoogleMail.com',
  'kidtee.n@gmail.com',
] as const;
