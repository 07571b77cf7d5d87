// The unsubscribe endpoint as the functions' tests call it: under the tests' secret, with MAIL_FROM's address
// as the contact, and an empty query unless the request brings one.

import {
  handleUnsubscribe,
  type UnsubscribeDeps,
  type UnsubscribeHttpRequest,
  type UnsubscribeHttpResponse,
} from '../src/http/unsubscribe';
import { UNSUBSCRIBE_SECRET } from './signups';

export type UnsubscribeRequest = Partial<UnsubscribeHttpRequest> & { method: string };

export function callUnsubscribe(
  request: UnsubscribeRequest,
  deps: Omit<UnsubscribeDeps, 'secret' | 'contact'>,
): Promise<UnsubscribeHttpResponse> {
  return handleUnsubscribe(
    { query: {}, ...request },
    { secret: UNSUBSCRIBE_SECRET, contact: 'hello@goody.example', ...deps },
  );
}
