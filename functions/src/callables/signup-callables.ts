import '../global-options';
import { onCall } from 'firebase-functions/v2/https';
import { withAppCheck } from '../app-check';
import { type AcceptedReply, CALLABLES, type CallableName } from '../contract';
import { cloudLogger, type Logger } from '../logs';
import { parseAddContactInput, parseThankYouInput, validated } from '../schemas';

/**
 * The two callables the page makes after its insert, add-contact-to-mailerlite and send-thank-you-email,
 * in one shape: check the body and answer `accepted`. They make no work: the stored row is the outbox, and
 * its create trigger (delivery/index-signup.ts) enqueues the contact and the thank-you the spec names after
 * these two calls. So nothing a caller sends, a stranger's guess, another spelling of someone's address, a
 * thousand calls, can take, delay or steer a person's delivery, and no call costs a dispatch of the queues
 * real rows share.
 *
 * A call reads nothing and answers the same for every well-formed body, stored or not, erased, already a
 * contact or thanked, or a stranger's guess: neither the reply nor its timing says which. Bad input is
 * `invalid-argument`, and changes nothing.
 */
export interface SignupCallableDeps {
  logger: Logger;
}

/** The one reply to every well-formed call (contract/src/index.ts, AcceptedReply). */
const ACCEPTED: AcceptedReply = Object.freeze({ status: 'accepted' });

function signupCallable(name: CallableName, parse: (data: unknown) => unknown) {
  const handle = async (data: unknown, deps: SignupCallableDeps): Promise<AcceptedReply> => {
    validated(name, deps.logger, parse, data);
    return ACCEPTED;
  };
  const deployed = onCall(
    { timeoutSeconds: 30 },
    withAppCheck(name, (request) => handle(request.data, { logger: cloudLogger })),
  );
  return { handle, deployed };
}

const addContact = signupCallable(CALLABLES.addContact, parseAddContactInput);
const sendThankYou = signupCallable(CALLABLES.sendThankYou, parseThankYouInput);

export const handleAddContactToMailerlite = addContact.handle;
export const addContactToMailerlite = addContact.deployed;
export const handleSendThankYouEmail = sendThankYou.handle;
export const sendThankYouEmail = sendThankYou.deployed;
