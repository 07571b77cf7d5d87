import type { Clock } from '../clock';
import type { SubscriptionType } from '../contract';
import {
  type BatchRequest,
  fieldErrors,
  type MailerLiteClient,
  mailerLiteTime,
  type UpsertSubscriberInput,
} from '../mailerlite/client';
import { MailerLiteError, MailerLiteValidationError } from '../mailerlite/errors';
import { refusedGroupIds } from '../mailerlite/groups';
import { classify, type Meaning } from '../mailerlite/meaning';
import type { Contact } from './pages';

/** What MailerLite answered about one contact of a step. */
export interface Answer {
  contact: Contact;
  meaning: Meaning;
  /** For `group_gone`: the ids it refused, among those this contact's upsert sent. */
  refusedGroupIds: string[];
  /**
   * Set when the contact's own request failed (a single upsert): the error then concerns the
   * request, and its pacing, rather than the contact alone as an entry of a batch does.
   */
  failed?: RequestFailure;
}

/** A request that failed as a whole, and when (clock ms): a Retry-After counts from then. */
export interface RequestFailure {
  error: MailerLiteError;
  at: number;
}

/** One answer per contact, in order; or how a batch failed as a whole. */
export type Sent = { answers: Answer[] } | { failed: RequestFailure };

/**
 * Sends one step: `contacts` in one batch, or as single upserts at once. Each answer is classified
 * through ./meaning.ts; 429s come back as answers too (maxRateLimitWaits: 0), since the run paces
 * all its requests, not just one. Throws only what is not a MailerLite error (a bug).
 */
export async function sendStep(
  { client, clock }: { client: MailerLiteClient; clock: Clock },
  step: { kind: 'batch' | 'single'; contacts: Contact[] },
  groupIds: Readonly<Partial<Record<SubscriptionType, string>>>,
  deadline: number,
): Promise<Sent> {
  const options = { deadline, maxRateLimitWaits: 0 };
  const upserts = step.contacts.map((contact) => upsertFor(contact, groupIds));
  if (step.kind === 'batch') {
    const requests: BatchRequest[] = upserts.map((body) => ({
      method: 'POST',
      path: 'api/subscribers',
      body,
    }));
    let responses: Awaited<ReturnType<MailerLiteClient['batch']>>;
    try {
      responses = await client.batch(requests, options);
    } catch (error) {
      if (error instanceof MailerLiteError) return { failed: { error, at: clock.now() } };
      throw error;
    }
    return {
      answers: responses.map((response, index) => {
        const errors = fieldErrors(response.body);
        const sentGroups = upserts[index]?.groups ?? [];
        return {
          contact: step.contacts[index] as Contact,
          meaning: classify(response.code, errors),
          refusedGroupIds: refusedGroupIds(errors, sentGroups),
        };
      }),
    };
  }
  const answers = await Promise.all(
    step.contacts.map(async (contact, index): Promise<Answer> => {
      const upsert = upserts[index] as UpsertSubscriberInput;
      try {
        await client.upsertSubscriber(upsert, options);
        return { contact, meaning: 'ok', refusedGroupIds: [] };
      } catch (error) {
        if (!(error instanceof MailerLiteError)) throw error;
        const errors = error instanceof MailerLiteValidationError ? error.errors : {};
        return {
          contact,
          meaning: classify(error),
          refusedGroupIds: refusedGroupIds(errors, upsert.groups ?? []),
          failed: { error, at: clock.now() },
        };
      }
    }),
  );
  return { answers };
}

/**
 * The upsert that delivers `contact`: every group it asked for, by id, its latest source, and when
 * it first signed up as MailerLite's consent time.
 */
function upsertFor(
  contact: Contact,
  groupIds: Readonly<Partial<Record<SubscriptionType, string>>>,
): UpsertSubscriberInput {
  return {
    email: contact.address ?? contact.email,
    fields: { source: contact.source },
    // The run resolves every type's group before its first step.
    groups: [...contact.types].flatMap((type) => groupIds[type] ?? []),
    ...(contact.optedInAt > 0 ? { opted_in_at: mailerLiteTime(contact.optedInAt) } : {}),
  };
}
