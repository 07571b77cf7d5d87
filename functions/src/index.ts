// Nested exports: Firebase names a function by joining its groups with "-" and finds it by walking them, so a
// flat export named add-contact-to-mailerlite deploys, but its calls fail ("Failed to find function").
import { addContactToMailerlite, sendThankYouEmail } from './callables/signup-callables';
import { syncEmailsToMailerlite } from './callables/sync-callable';
import { deliverContact } from './delivery/deliver-contact';
import { deliverThankYou } from './delivery/deliver-thank-you';
import { indexSignupOnCreate } from './delivery/index-signup';
import { reconcileDeliveriesJob } from './delivery/reconcile-deliveries';
import { finishErasures, finishPendingErasure } from './privacy/finish-erasure';

export const add = { contact: { to: { mailerlite: addContactToMailerlite } } };
export const send = { thank: { you: { email: sendThankYouEmail } } };
export const sync = { emails: { to: { mailerlite: syncEmailsToMailerlite } } };

// Cloud Tasks names a queue after its function; taskQueue() finds it by that name.
export const deliver = { contact: deliverContact, thank: { you: deliverThankYou } };

export { unsubscribe } from './http/unsubscribe';
export { eraseExpiredSignups as retention } from './scheduled/retention';

export const reconcile = { deliveries: reconcileDeliveriesJob };

export const finish = { erasure: finishPendingErasure, erasures: finishErasures };

export const index = { signup: indexSignupOnCreate };
