import '../global-options';
import type { Firestore } from 'firebase-admin/firestore';
import { onCall } from 'firebase-functions/v2/https';
import { withAppCheck } from '../app-check';
import { type Clock, systemClock } from '../clock';
import { CALLABLES } from '../contract';
import { adminFirestore } from '../firestore';
import { cloudLogger, emailFields, type LogFields, type Logger } from '../logs';
import { type MailerLiteClient, mailerLiteTime } from '../mailerlite/client';
import { mailerLiteFromParams } from '../mailerlite/from-params';
import { type GroupConfig, groupIdsRefusedBy, reResolveGroupId, resolveGroupId } from '../mailerlite/groups';
import { mailerLiteHttpsError } from '../mailerlite/https-error';
import { MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET } from '../params';
import { erasedSince, forgetNowOrLater, millisOf, storedSignups } from '../privacy/erasure';
import { ACCEPTED, type Accepted, ADD_CONTACT_REPLY_FLOOR_MS, waitForFloor } from '../privacy/reply-floor';
import { type AddContactInput, parseAddContactInput, validated } from '../schemas';

/**
 * The visitor waits for this call before the success toast, so MailerLite gets a short budget: a
 * slow or refusing MailerLite costs the page a few seconds, never a minute. Nothing is lost by giving
 * up: the sign-up is stored and the sync delivers it.
 */
export const ADD_CONTACT_BUDGET_MS = 12_000;
export const ADD_CONTACT_REQUEST_TIMEOUT_MS = 5_000;

export interface AddContactDeps {
  db: Firestore;
  client: MailerLiteClient;
  groups: GroupConfig;
  clock: Clock;
  logger: Logger;
  budgetMs?: number;
  requestTimeoutMs?: number;
  /** The reply floor (see reply-floor.ts); tests that do not time the reply set 0. */
  replyFloorMs?: number;
  /** UNSUBSCRIBE_SECRET: seals the address when undoing a push must wait for MailerLite (erasure.ts). */
  unsubscribeSecret: string;
}

/**
 * Upserts a stored sign-up into the group of its subscription type, with its source as a field and
 * its sign-up time as MailerLite's consent time. Only for an address with a stored sign-up of the
 * pairing the call names: anyone can call this endpoint, and it must not let anyone put someone
 * else's address on the list. Every well-formed call gets the same reply at the same time
 * (reply-floor.ts); what happened is in the logs.
 *
 * MailerLite's upsert adds groups and keeps the ones the subscriber is already in, so someone who
 * joined through both forms ends up in both groups.
 */
export async function handleAddContactToMailerlite(data: unknown, deps: AddContactDeps): Promise<Accepted> {
  const startedAt = deps.clock.now();
  const input = validated(CALLABLES.addContact, deps.logger, parseAddContactInput, data);
  const log = {
    ...emailFields(input.email),
    subscription_type: input.subscriptionType,
    source: input.source,
  };
  try {
    await addStoredContact(input, deps, log);
  } catch (error) {
    const { code, message } = mailerLiteHttpsError(error);
    deps.logger.warn('add_contact.failed', {
      ...log,
      error: error instanceof Error ? error.name : 'unknown',
      status: (error as { status?: unknown }).status as number | undefined,
      code,
      // Our configuration (a group, the key) is what an operator must fix: say which. Other messages
      // can quote MailerLite on the contact, so they stay out.
      message: code === 'failed-precondition' ? message : undefined,
    });
  }
  const floorMs = deps.replyFloorMs ?? ADD_CONTACT_REPLY_FLOOR_MS;
  const elapsedMs = deps.clock.now() - startedAt;
  if (elapsedMs > floorMs && floorMs > 0) {
    deps.logger.warn('reply.floor_exceeded', {
      callable: CALLABLES.addContact,
      elapsed_ms: elapsedMs,
    });
  }
  await waitForFloor(deps.clock, startedAt, floorMs);
  return ACCEPTED;
}

async function addStoredContact(input: AddContactInput, deps: AddContactDeps, log: LogFields): Promise<void> {
  const signups = (await storedSignups(deps.db, input.emailAsSent)).filter(
    (doc) => doc.get('subscription_type') === input.subscriptionType && doc.get('source') === input.source,
  );
  if (signups.length === 0) {
    deps.logger.warn('add_contact.refused_unknown_address', log);
    return;
  }
  const times = signups.map((doc) => millisOf(doc.get('created_at'))).filter((time) => time > 0);
  const signedUpAt = times.length > 0 ? Math.max(...times) : 0;
  // The first sign-up of this pairing is when the person opted in to this list.
  const optedInAt = mailerLiteTime(times.length > 0 ? Math.min(...times) : deps.clock.now());

  const request = {
    deadline: deps.clock.now() + (deps.budgetMs ?? ADD_CONTACT_BUDGET_MS),
    timeoutMs: deps.requestTimeoutMs ?? ADD_CONTACT_REQUEST_TIMEOUT_MS,
    maxAttempts: 2,
  };
  const upsert = (groupId: string) =>
    deps.client.upsertSubscriber(
      { email: input.email, fields: { source: input.source }, groups: [groupId], opted_in_at: optedInAt },
      request,
    );
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
  deps.logger.info('add_contact.upserted', { ...log, status: result.created ? 'created' : 'updated' });

  // The person left (one-click unsubscribe) after this call read the sign-up: undo the push.
  if ((await erasedSince(deps.db, [{ email: input.email, signedUpAt }])).size > 0) {
    const forget = await forgetNowOrLater(
      { db: deps.db, client: deps.client, secret: deps.unsubscribeSecret },
      input.email,
      request,
    );
    deps.logger.warn('add_contact.erased_during_call', { ...log, forget: forget.kind });
  }
}

export const addContactToMailerlite = onCall(
  { secrets: [MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET], timeoutSeconds: 30 },
  withAppCheck(CALLABLES.addContact, async (request) => {
    const { client, groups } = mailerLiteFromParams();
    return handleAddContactToMailerlite(request.data, {
      db: await adminFirestore(),
      client,
      groups,
      clock: systemClock,
      logger: cloudLogger,
      unsubscribeSecret: UNSUBSCRIBE_SECRET.value(),
    });
  }),
);
