// The document id of an address's mailbox: its thank-you record and its suppression entry. For an operator
// putting back on the list someone who asked by mail: delete `suppressed_mailboxes/<the id printed>` in the
// Firebase console. Reads MAILBOX_KEY_SECRET from the environment (the value set with
// `firebase functions:secrets:set`; `firebase functions:secrets:access MAILBOX_KEY_SECRET` prints it).
//
//   MAILBOX_KEY_SECRET=… npx tsx functions/scripts/mailbox-key.ts kid@example.com
import { emailProblem } from '../src/contract';
import { canonicalMailbox, mailboxKey } from '../src/privacy/mailbox-key';

const [address] = process.argv.slice(2);
const secret = process.env.MAILBOX_KEY_SECRET;
if (!address || emailProblem(address.trim()) !== null) {
  process.stderr.write('usage: MAILBOX_KEY_SECRET=… npx tsx functions/scripts/mailbox-key.ts <address>\n');
  process.exit(2);
}
if (!secret) {
  process.stderr.write('MAILBOX_KEY_SECRET is not set: give it the value the functions use.\n');
  process.exit(2);
}
process.stdout.write(`mailbox ${canonicalMailbox(address)}\nid      ${mailboxKey(secret, address)}\n`);
