import '../global-options';
import { onCall } from 'firebase-functions/v2/https';
import { withAppCheck } from '../app-check';
import { type AcceptedReply, CALLABLES, type CallableName } from '../contract';
import { cloudLogger, type Logger } from '../logs';
import { parseAddContactInput, parseThankYouInput, validated } from '../schemas';

/**
 * The page's two callables check the body and answer `accepted`, reading nothing: the row's trigger makes
 * the work, so no caller can take, delay or steer a delivery, and neither reply nor timing tells anything.
 */

/** The one reply to every well-formed call (contract/src/index.ts, AcceptedReply). */
const ACCEPTED: AcceptedReply = Object.freeze({ status: 'accepted' });

function signupCallable(name: CallableName, parse: (data: unknown) => unknown) {
  const handle = async (data: unknown, deps: { logger: Logger }): Promise<AcceptedReply> => {
    validated(name, deps.logger, parse, data);
    return ACCEPTED;
  };
  const deployed = onCall(
    { timeoutSeconds: 30 },
    withAppCheck(name, (request) => handle(request.data, { logger: cloudLogger })),
  );
  return [handle, deployed] as const;
}

export const [handleAddContactToMailerlite, addContactToMailerlite] = signupCallable(
  CALLABLES.addContact,
  parseAddContactInput,
);
export const [handleSendThankYouEmail, sendThankYouEmail] = signupCallable(
  CALLABLES.sendThankYou,
  parseThankYouInput,
);
