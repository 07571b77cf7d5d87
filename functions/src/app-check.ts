import { type CallableRequest, HttpsError } from 'firebase-functions/v2/https';
import type { CallableName } from './contract';
import { cloudLogger, type Logger } from './logs';
import { ENFORCE_APP_CHECK } from './params';

/**
 * With ENFORCE_APP_CHECK true, refuses a call without a verified token before the handler runs. Not onCall's
 * `enforceAppCheck`: it reads the param at module load, warning on every deploy (firebase-functions#1921).
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
