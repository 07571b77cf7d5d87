import { type CallableRequest, HttpsError } from 'firebase-functions/v2/https';
import type { CallableName } from './contract';
import { cloudLogger, type Logger } from './logs';
import { ENFORCE_APP_CHECK } from './params';

/**
 * Refuses a call without a verified App Check token when ENFORCE_APP_CHECK is true, before the
 * handler runs, so nothing is read, written or sent for it. With the param false (the default) it
 * changes nothing.
 *
 * Why not onCall's own `enforceAppCheck: ENFORCE_APP_CHECK`: firebase-functions 7 accepts the param
 * there but resolves it with `.value()` when onCall() runs, that is when the module loads, and the CLI
 * loads the module for discovery on every deploy and emulator start. Each callable then prints three
 * warnings that a param was read "during function deployment ... This is usually a mistake"
 * (firebase/firebase-functions#1921). Reading the param per call has none of that, and the outcome
 * is the same: the SDK verifies a token it is sent (with enforcement off it lets a call with a bad
 * token through without `request.app`), and this refuses every call that arrived without a verified
 * one, with the code the SDK's own enforcement answers.
 */
export function withAppCheck<Data, Result>(
  callable: CallableName,
  handler: (request: CallableRequest<Data>) => Promise<Result>,
  logger: Logger = cloudLogger,
): (request: CallableRequest<Data>) => Promise<Result> {
  return async (request) => {
    if (ENFORCE_APP_CHECK.value() && !request.app) {
      logger.warn('app_check.refused', { callable });
      throw new HttpsError('unauthenticated', 'This request has no valid App Check token.');
    }
    return handler(request);
  };
}
