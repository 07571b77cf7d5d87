import { cloudLogger } from '../logs';
import {
  DEFAULTS,
  MAILERLITE_API_KEY,
  MAILERLITE_BASE_URL,
  MAILERLITE_GROUP_CLUB,
  MAILERLITE_GROUP_UPDATES,
} from '../params';
import { MailerLiteClient, type MailerLiteClientOptions } from './client';

/** The client and group configuration the params describe; read at call time, never at load time. */
export function mailerLiteFromParams(options: Partial<MailerLiteClientOptions> = {}) {
  const apiKey = MAILERLITE_API_KEY.value();
  const baseUrl = MAILERLITE_BASE_URL.value() || DEFAULTS.MAILERLITE_BASE_URL;
  return {
    client: new MailerLiteClient({ apiKey, baseUrl, logger: cloudLogger, ...options }),
    groups: { updates: MAILERLITE_GROUP_UPDATES.value(), club: MAILERLITE_GROUP_CLUB.value() },
  };
}
