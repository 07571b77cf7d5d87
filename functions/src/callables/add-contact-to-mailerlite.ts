import '../global-options';
import { onCall } from 'firebase-functions/v2/https';
import { withAppCheck } from '../app-check';
import { type Clock, systemClock } from '../clock';
import { cloudLogger, emailFields, type Logger } from '../logs';
import type { MailerLiteClient } from '../mailerlite/client';
import { mailerLiteFromParams } from '../mailerlite/from-params';
import { type GroupConfig, groupIdsRefusedBy, reResolveGroupId, resolveGroupId } from '../mailerlite/groups';
import { mailerLiteHttpsError } from '../mailerlite/https-error';
import { MAILERLITE_API_KEY } from '../params';
import { parseAddContactInput, type SubscriptionType, validated } from '../schemas';

/**
 * The visitor waits for this call before the success toast, so MailerLite gets a short budget: a
 * slow or refusing MailerLite costs the page a few seconds, never a minute. Nothing is lost by giving
 * up: the sign-up is stored and the sync delivers it.
 */
export const ADD_CONTACT_BUDGET_MS = 12_000;
export const ADD_CONTACT_REQUEST_TIMEOUT_MS = 5_000;

export interface AddContactResult {
  /** `created`: new in MailerLite; `updated`: already there, now also in this group. */
  status: 'created' | 'updated';
  subscription_type: SubscriptionType;
}

export interface AddContactDeps {
  client: MailerLiteClient;
  groups: GroupConfig;
  clock: Clock;
  logger: Logger;
  budgetMs?: number;
  requestTimeoutMs?: number;
}

/**
 * Upserts the subscriber into the group of its subscription type, with its source as a field.
 * MailerLite's upsert adds groups and keeps the ones the subscriber is already in, so someone who
 * joined through both forms ends up in both groups.
 */
export async function handleAddContactToMailerlite(
  data: unknown,
  deps: AddContactDeps,
): Promise<AddContactResult> {
  const input = validated('add-contact-to-mailerlite', deps.logger, parseAddContactInput, data);
  const log = {
    ...emailFields(input.email),
    subscription_type: input.subscriptionType,
    source: input.source,
  };
  const request = {
    deadline: deps.clock.now() + (deps.budgetMs ?? ADD_CONTACT_BUDGET_MS),
    timeoutMs: deps.requestTimeoutMs ?? ADD_CONTACT_REQUEST_TIMEOUT_MS,
    maxAttempts: 2,
  };
  const upsert = (groupId: string) =>
    deps.client.upsertSubscriber(
      { email: input.email, fields: { source: input.source }, groups: [groupId] },
      request,
    );
  try {
    const groupId = await resolveGroupId(deps.client, deps.groups, input.subscriptionType, request);
    let result: Awaited<ReturnType<typeof upsert>>;
    try {
      result = await upsert(groupId);
    } catch (error) {
      // The cached group is gone (deleted in MailerLite): resolve its name again and retry once,
      // within the same budget. A second refusal is final.
      if (groupIdsRefusedBy(error, [groupId]).length === 0) throw error;
      const type = input.subscriptionType;
      const fresh = await reResolveGroupId(deps.client, deps.groups, type, groupId, request);
      if (fresh === groupId) throw error;
      deps.logger.warn('mailerlite.group_re_resolved', {
        subscription_type: type,
        refused_group_id: groupId,
        group_id: fresh,
      });
      result = await upsert(fresh);
    }
    const status = result.created ? 'created' : 'updated';
    deps.logger.info('add_contact.upserted', { ...log, status });
    return { status, subscription_type: input.subscriptionType };
  } catch (error) {
    const httpsError = mailerLiteHttpsError(error);
    deps.logger.warn('add_contact.failed', {
      ...log,
      error: error instanceof Error ? error.name : 'unknown',
      status: (error as { status?: unknown }).status as number | undefined,
      code: httpsError.code,
    });
    throw httpsError;
  }
}

export const addContactToMailerlite = onCall(
  { secrets: [MAILERLITE_API_KEY], timeoutSeconds: 30 },
  withAppCheck('add-contact-to-mailerlite', async (request) => {
    const { client, groups } = mailerLiteFromParams();
    return handleAddContactToMailerlite(request.data, {
      client,
      groups,
      clock: systemClock,
      logger: cloudLogger,
    });
  }),
);
