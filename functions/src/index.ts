// The product names the callables add-contact-to-mailerlite, send-thank-you-email and
// sync-emails-to-mailerlite (contract/src/index.ts, CALLABLES). Firebase names a function inside export groups by joining the group
// path with "-", and the runtime (the emulator and Cloud Functions alike) finds it by walking that
// path: a flat export named add-contact-to-mailerlite deploys, but its calls fail with "Failed to
// find function add.contact.to.mailerlite in the loaded module". Hence the nesting.
import { addContactToMailerlite, sendThankYouEmail } from './callables/signup-callables';
import { syncEmailsToMailerlite } from './callables/sync-callable';
import { deliverContact } from './delivery/deliver-contact';
import { deliverThankYou } from './delivery/deliver-thank-you';
import { indexSignupOnCreate } from './delivery/index-signup';
import { reconcileDeliveriesJob } from './delivery/reconcile-deliveries';
import { finishPendingErasure } from './privacy/finish-erasure';
import { finishErasures } from './privacy/pending-erasures';

export const add = { contact: { to: { mailerlite: addContactToMailerlite } } };
export const send = { thank: { you: { email: sendThankYouEmail } } };
export const sync = { emails: { to: { mailerlite: syncEmailsToMailerlite } } };

// The task queues of a sign-up's delivery (delivery/): deliver-contact and deliver-thank-you, which each stored
// row's trigger (index-signup, below) enqueues to. Cloud Tasks names a queue after its function, and
// firebase-admin's taskQueue() finds it by that name.
export const deliver = { contact: deliverContact, thank: { you: deliverThankYou } };

// One word each, so no nesting: the one-click unsubscribe link of the thank-you mail (an HTTPS
// function, https://<region>-<project>.cloudfunctions.net/unsubscribe) and the daily retention job.
export { unsubscribe } from './http/unsubscribe';
export { eraseExpiredSignups as retention } from './scheduled/retention';

// reconcile-deliveries: every 10 minutes, enqueues again the delivery of rows still pending after their tasks
// gave up, and does the trigger's work for rows it never reached (delivery/reconcile-deliveries.ts).
export const reconcile = { deliveries: reconcileDeliveriesJob };

// finish-erasure: the task queue of the erasures an unsubscribe left pending because MailerLite failed,
// each retried until MailerLite answers (privacy/finish-erasure.ts). finish-erasures: every 30 minutes,
// finishes what is still pending, such as an erasure that died before its task was enqueued
// (privacy/pending-erasures.ts).
export const finish = { erasure: finishPendingErasure, erasures: finishErasures };

// index-signup: the row is the outbox. Writes each new sign-up's mailbox key and delivery state on it, and
// enqueues its contact and its thank-you (delivery/index-signup.ts).
export const index = { signup: indexSignupOnCreate };
