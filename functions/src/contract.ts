// The wire contract shared with the web app and the tests (contract/src/index.ts: callable names and
// bodies, the form/list pairing, the sign-ups collection), and beside it the names of the Firestore
// state only the functions touch. The build compiles the contract next to this code (tsconfig.json's
// rootDir is the repo), so a deploy of functions/ carries it without a package to install.
import { COLLECTIONS } from '../../contract/src/index';

export * from '../../contract/src/index';

/** One document per sign-up, written by the page (append-only; no client reads it). */
export const SIGNUPS = COLLECTIONS.signups;
/** `thank_you_mails/{mailbox key}`: one thank-you mail per mailbox, ever (privacy/mailbox-key.ts). */
export const THANK_YOU_MAILS = 'thank_you_mails';
/** `suppressed_mailboxes/{mailbox key}`: the mailboxes that unsubscribed, for good (privacy/suppression.ts). */
export const SUPPRESSIONS = 'suppressed_mailboxes';
