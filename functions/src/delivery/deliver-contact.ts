import '../global-options';
import type { DocumentSnapshot, Firestore } from 'firebase-admin/firestore';
import { onTaskDispatched } from 'firebase-functions/v2/tasks';
import { type Clock, systemClock } from '../clock';
import { adminFirestore, millisOf } from '../firestore';
import { cloudLogger, type LogFields, type Logger } from '../logs';
import { type MailerLiteClient, mailerLiteTime, type UpsertResult } from '../mailerlite/client';
import { MailerLiteError } from '../mailerlite/errors';
import { mailerLiteFromParams } from '../mailerlite/from-params';
import { type GroupConfig, GroupHolder, groupIdsRefusedBy } from '../mailerlite/groups';
import { failureOf } from '../mailerlite/meaning';
import { MAILBOX_KEY_SECRET, MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET } from '../params';
import { finishErasureOnCloudTasks } from '../privacy/finish-erasure';
import { emailFields } from '../privacy/log-fields';
import { type Mailboxes, mailboxesFromParams } from '../privacy/mailboxes';
import type { AddContactInput } from '../schemas';
import { MAILBOX_KEY_FIELD, mailboxSignups } from '../signups/lookup';
import { runTask, storedAddress } from './part-life';
import { positiveNumber, RETRY, RetryLater } from './queue';

/** Two tries of a request (a short Retry-After between) fit the budget; longer is Cloud Tasks' retry. */
export const CONTACT_TASK_BUDGET_MS = 30_000;
export const CONTACT_REQUEST_TIMEOUT_MS = 10_000;

export interface DeliverContactDeps {
  db: Firestore;
  client: MailerLiteClient;
  groups: GroupConfig;
  clock: Clock;
  logger: Logger;
  budgetMs?: number;
  requestTimeoutMs?: number;
  mailboxes: Mailboxes;
}

/** Sign-ups of one mailbox and list read for the consent time: bounded whatever a bot stored. */
export const CONTACT_ROWS_READ = 20;

/**
 * Upserts a stored row into its list's group, with the mailbox's first sign-up of that list as the consent
 * time. One contact per mailbox (privacy/mailerlite-contacts.ts): a list it already has costs no request, and
 * it moves once to a bare spelling stored after a `+tag` one. Of MailerLite's refusals only a 422 on the
 * address ends the part; every other failure, our setup's included, is RetryLater.
 */
export async function handleDeliverContact(task: unknown, deps: DeliverContactDeps) {
  return runTask(task, 'contact', deps, storedAddress, async (row, _round, stored) => {
    const log = {
      ...emailFields(stored.email),
      subscription_type: stored.subscriptionType,
      source: stored.source,
    };
    return addStoredContact(row, stored, deps, log).catch((error: unknown) => {
      if (error instanceof RetryLater) throw error;
      if (!(error instanceof MailerLiteError)) {
        deps.logger.warn('add_contact.failed', { ...log, error: 'database', code: 'unavailable' });
        throw new RetryLater('The database is unavailable.', 'database');
      }
      const { code, message, retry } = failureOf(error);
      deps.logger.warn('add_contact.failed', {
        ...log,
        error: error.name,
        status: error.status ?? undefined,
        code,
        // Only our setup's message: others may quote the contact.
        message: code === 'failed-precondition' ? message : undefined,
      });
      if (code === 'invalid-argument') return 'refused';
      const lastError = `mailerlite ${error.status ?? error.name}`;
      if (retry) throw new RetryLater('MailerLite is unavailable.', lastError);
      throw new RetryLater('MailerLite refused our setup.', lastError, 'configuration');
    });
  });
}

/** Throws what MailerLite or Firestore throw, and RetryLater while another task pushes the mailbox. */
async function addStoredContact(
  row: DocumentSnapshot,
  input: AddContactInput,
  deps: DeliverContactDeps,
  log: LogFields,
): Promise<'delivered' | 'already_delivered' | 'suppressed'> {
  const { suppression, contacts } = deps.mailboxes;
  if ((await suppression.among([input.email])).size > 0) {
    // The mailbox unsubscribed: a later sign-up of it, by anyone, does not put it back.
    deps.logger.info('add_contact.suppressed', log);
    return 'suppressed';
  }
  const claim = await contacts.claim(input.email, { list: input.subscriptionType, clock: deps.clock });
  if (claim.status === 'already') {
    deps.logger.info('add_contact.already_delivered', log);
    return 'already_delivered';
  }
  if (claim.status === 'in_progress')
    throw new RetryLater('Another task is pushing this mailbox.', 'in_progress');
  // Read again under the claim: the erasure writes its entry before reading the record, so either this read
  // sees the entry or the erasure sees the claim and forgets after the push (privacy/erasure.ts).
  if ((await suppression.among([input.email])).size > 0) {
    await claim.abandon();
    deps.logger.info('add_contact.suppressed', log);
    return 'suppressed';
  }

  // Consent: the mailbox's first sign-up of this list; of any list for a move (as the tagged contact had).
  const key = String(row.get(MAILBOX_KEY_FIELD) ?? deps.mailboxes.key(input.email));
  const list = claim.movesFrom ? undefined : input.subscriptionType;
  const signups = await mailboxSignups(deps.db, key, CONTACT_ROWS_READ, list);
  const times = [row, ...signups].map((doc) => millisOf(doc.get('created_at'))).filter((time) => time > 0);
  const optedInAt = mailerLiteTime(times.length > 0 ? Math.min(...times) : deps.clock.now());
  const request = {
    deadline: deps.clock.now() + (deps.budgetMs ?? CONTACT_TASK_BUDGET_MS),
    timeoutMs: deps.requestTimeoutMs ?? CONTACT_REQUEST_TIMEOUT_MS,
    maxAttempts: 2,
  };
  const groups = new GroupHolder(deps.client, deps.groups, deps.logger);
  let result: UpsertResult;
  try {
    // A move keeps the tagged contact's groups and the person's own refusal.
    const moving = claim.movesFrom ? await deps.client.getSubscriber(claim.movesFrom, request) : null;
    const kept = {
      groups: moving?.groups.map((group) => group.id) ?? [],
      status: moving && KEPT_STATUSES.has(moving.status) ? moving.status : undefined,
    };
    const upsert = (groupId: string) =>
      deps.client.upsertSubscriber(
        {
          email: claim.email,
          fields: { source: input.source },
          groups: [...new Set([...kept.groups, groupId])],
          opted_in_at: optedInAt,
          ...(kept.status ? { status: kept.status } : {}),
        },
        request,
      );
    const groupId = await groups.id(input.subscriptionType, request);
    result = await upsert(groupId).catch(async (error: unknown) => {
      // The cached group was deleted in MailerLite: resolved again and tried once more.
      const deleted = groupIdsRefusedBy(error, [groupId]).length > 0;
      const fresh = deleted ? await groups.reResolve(input.subscriptionType, request) : null;
      if (fresh === null) throw error;
      return upsert(fresh);
    });
    // Last: a failure before leaves the tagged one for the next claim to move again.
    if (claim.movesFrom) await deps.client.forgetSubscriber(claim.movesFrom, request);
  } catch (error) {
    await claim.abandon();
    throw error;
  }
  await claim.delivered();
  deps.logger.info(claim.movesFrom ? 'add_contact.moved_to_own_address' : 'add_contact.upserted', {
    ...log,
    status: result.created ? 'created' : 'updated',
  });

  // An unsubscribe during the push: undone here, or by the erasure once this claim's lease runs out.
  const undone = deps.mailboxes.suppression.forgetIfSuppressed(
    deps.client,
    [{ email: input.email, address: claim.email }],
    {
      clock: deps.clock,
      request: { deadline: deps.clock.now() + (deps.budgetMs ?? CONTACT_TASK_BUDGET_MS) },
    },
  );
  for await (const { forget } of undone) {
    deps.logger.warn('add_contact.erased_during_call', {
      ...log,
      forget: forget.kind,
      finish_task: forget.kind === 'pending' ? forget.finishTask : undefined,
    });
  }
  return 'delivered';
}

/** The person's own refusals, kept by a move; a bounce is the tagged spelling's, the reason to move. */
const KEPT_STATUSES: ReadonlySet<string> = new Set(['unsubscribed', 'junk']);

/**
 * 115 of MailerLite's 120 requests a minute, leaving 5 to the unsubscribes' forgets. An env variable, not a
 * param: params have no fractional numbers, and the rate per second is one.
 */
export const MAILERLITE_TASKS_PER_MINUTE = positiveNumber(process.env.MAILERLITE_TASKS_PER_MINUTE, 115);

/** How long one task may take before the concurrency, not the rate, limits the queue. */
export const CONTACT_TASK_SECONDS = 3;

/** Tasks in flight: rate x CONTACT_TASK_SECONDS (Little's law), at least 6, so the rate stays the limit. */
export function contactConcurrency(perMinute = MAILERLITE_TASKS_PER_MINUTE): number {
  return Math.max(6, Math.ceil((perMinute / 60) * CONTACT_TASK_SECONDS));
}

export const deliverContact = onTaskDispatched(
  {
    secrets: [MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET, MAILBOX_KEY_SECRET],
    timeoutSeconds: 60,
    retryConfig: RETRY,
    rateLimits: {
      maxDispatchesPerSecond: MAILERLITE_TASKS_PER_MINUTE / 60,
      maxConcurrentDispatches: contactConcurrency(),
    },
  },
  async (request) => {
    const db = await adminFirestore();
    await handleDeliverContact(request.data, {
      ...mailerLiteFromParams(),
      db,
      clock: systemClock,
      logger: cloudLogger,
      mailboxes: mailboxesFromParams(db, finishErasureOnCloudTasks),
    });
  },
);
