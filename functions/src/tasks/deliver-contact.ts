import '../global-options';
import type { Firestore } from 'firebase-admin/firestore';
import { onTaskDispatched } from 'firebase-functions/v2/tasks';
import { type Clock, systemClock } from '../clock';
import { adminFirestore, millisOf } from '../firestore';
import { cloudLogger, type LogFields, type Logger } from '../logs';
import { type MailerLiteClient, mailerLiteTime } from '../mailerlite/client';
import { MailerLiteError } from '../mailerlite/errors';
import { mailerLiteFromParams } from '../mailerlite/from-params';
import { type GroupConfig, GroupHolder, groupIdsRefusedBy } from '../mailerlite/groups';
import { failureOf } from '../mailerlite/meaning';
import { MAILBOX_KEY_SECRET, MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET } from '../params';
import { emailFields } from '../privacy/log-fields';
import { type Mailboxes, mailboxesFromParams } from '../privacy/mailboxes';
import { type AddContactInput, parseAddContactInput } from '../schemas';
import { mailboxSignups, storedSignups } from '../signups/lookup';
import { finishErasureOnCloudTasks } from './finish-erasure';
import { parseTask, positiveNumber, RETRY, RetryLater } from './queue';

/**
 * One MailerLite request may take this long, and the client may try twice (waiting out a short
 * Retry-After) within the task's budget; anything longer is Cloud Tasks' to retry later.
 */
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
  /** The mailbox's key, its suppression entry (which seals the address when undoing a push must wait for MailerLite) and its contact record. */
  mailboxes: Mailboxes;
  /** Cloud Tasks' retry count of this task (0 on its first attempt). */
  retryCount?: number;
}

/** Sign-ups of one address and list read to deliver it: enough for its consent time, bounded whatever a bot stored. */
export const CONTACT_ROWS_READ = 20;

/** What a task came to; a failure Cloud Tasks should retry is thrown (RetryLater) instead. */
export type ContactOutcome = 'delivered' | 'already_delivered' | 'not_stored' | 'suppressed' | 'dropped';

/**
 * Upserts a stored sign-up into the group of its list, with its source as a field and its first sign-up
 * time as MailerLite's consent time. Every stored row enqueues one of these tasks itself
 * (triggers/index-signup.ts), and the page's add-contact callable may enqueue another (a fast path, anyone
 * can call it): so the task delivers only a stored sign-up of the pairing it names, and a task for an
 * address with none is dropped at its first look: the row, when it comes, brings its own task.
 *
 * One MailerLite contact per mailbox (privacy/mailerlite-contacts.ts): the mailbox's record, claimed for the push,
 * names the spelling MailerLite knows and the lists it has; a list already there costs no request, so the
 * row's task and the callable's together make one upsert. MailerLite's upsert adds groups and keeps the
 * ones the subscriber is in, so someone who joined through both forms ends up in both groups. A failure a
 * retry can fix (429, 5xx, a timeout, the database, another task pushing the same mailbox) throws
 * RetryLater; one it cannot (the key refused, a group or field misconfigured, the address refused) is
 * logged once and the task dropped: the admin sync delivers the sign-up once the cause is fixed.
 */
export async function handleDeliverContact(task: unknown, deps: DeliverContactDeps): Promise<ContactOutcome> {
  const input = parseTask(task, parseAddContactInput, deps.logger, 'add_contact.task_malformed');
  if (!input) return 'dropped';
  const log = {
    ...emailFields(input.email),
    subscription_type: input.subscriptionType,
    source: input.source,
  };
  try {
    const outcome = await addStoredContact(input, deps, log);
    if (outcome === 'not_stored') deps.logger.info('add_contact.refused_unknown_address', log);
    return outcome;
  } catch (error) {
    if (error instanceof RetryLater) throw error;
    if (!(error instanceof MailerLiteError)) {
      deps.logger.warn('add_contact.failed', { ...log, error: 'database', code: 'unavailable' });
      throw new RetryLater('The database is unavailable.');
    }
    const { code, message, retry } = failureOf(error);
    deps.logger.warn('add_contact.failed', {
      ...log,
      error: error.name,
      status: error.status ?? undefined,
      code,
      // Our configuration (a group, the key) is what an operator must fix: say which. Other messages
      // can quote MailerLite on the contact, so they stay out.
      message: code === 'failed-precondition' ? message : undefined,
    });
    if (retry) throw new RetryLater('MailerLite is unavailable.');
    return 'dropped';
  }
}

/** Throws what MailerLite or Firestore throw, and RetryLater while another task pushes the mailbox. */
async function addStoredContact(
  input: AddContactInput,
  deps: DeliverContactDeps,
  log: LogFields,
): Promise<Exclude<ContactOutcome, 'dropped'>> {
  const signups = await storedSignupsOfList(deps, input);
  const { suppression, contacts } = deps.mailboxes;
  if (signups.length === 0) {
    // A retry of a task that pushed and then died, after which the person unsubscribed and their rows
    // went: the push may have landed after the erasure's forget, so forget again. A first attempt (a
    // stranger's guess) costs one look and no MailerLite request.
    if ((deps.retryCount ?? 0) > 0) await forgetIfErased({ email: input.email }, deps, log);
    return 'not_stored';
  }
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
  // Another task pushes this mailbox (perhaps for the other list, read before this row existed): look
  // again once it is done.
  if (claim.status === 'in_progress') throw new RetryLater('Another task is pushing this mailbox.');

  const times = signups.map((doc) => millisOf(doc.get('created_at'))).filter((time) => time > 0);
  // The first sign-up of this pairing read is when the person opted in to this list.
  const optedInAt = mailerLiteTime(times.length > 0 ? Math.min(...times) : deps.clock.now());
  const request = {
    deadline: deps.clock.now() + (deps.budgetMs ?? CONTACT_TASK_BUDGET_MS),
    timeoutMs: deps.requestTimeoutMs ?? CONTACT_REQUEST_TIMEOUT_MS,
    maxAttempts: 2,
  };
  const upsert = (groupId: string) =>
    deps.client.upsertSubscriber(
      { email: claim.email, fields: { source: input.source }, groups: [groupId], opted_in_at: optedInAt },
      request,
    );
  const groups = new GroupHolder(deps.client, deps.groups, deps.logger);
  let result: Awaited<ReturnType<typeof upsert>>;
  try {
    const groupId = await groups.id(input.subscriptionType, request);
    try {
      result = await upsert(groupId);
    } catch (error) {
      // The cached group is gone (deleted in MailerLite): resolve its name again and retry once,
      // within the same budget. A second refusal is final.
      if (groupIdsRefusedBy(error, [groupId]).length === 0) throw error;
      const fresh = await groups.reResolve(input.subscriptionType, request);
      if (fresh === null) throw error;
      result = await upsert(fresh);
    }
  } catch (error) {
    await claim.abandon();
    throw error;
  }
  await claim.delivered();
  deps.logger.info('add_contact.upserted', { ...log, status: result.created ? 'created' : 'updated' });

  // The person left (one-click unsubscribe) while this task was pushing: undo the push.
  await forgetIfErased({ email: input.email, address: claim.email }, deps, log);
  return 'delivered';
}

/**
 * The stored sign-ups of the task's address and list: by the mailbox key the row's trigger writes, then
 * by the address as typed (a row the trigger has not keyed yet). Filtered by list in the query, so rows a
 * bot stored on the other list cannot hide this one.
 */
async function storedSignupsOfList(deps: DeliverContactDeps, input: AddContactInput) {
  const key = deps.mailboxes.key(input.email);
  const byKey = await mailboxSignups(deps.db, key, CONTACT_ROWS_READ, input.subscriptionType);
  if (byKey.length > 0) return byKey;
  return storedSignups(deps.db, input.emailAsSent, CONTACT_ROWS_READ, input.subscriptionType);
}

/** Forgets the mailbox's contact if the person unsubscribed (the guard after a push), now or (MailerLite failing) later. */
async function forgetIfErased(
  pushed: { email: string; address?: string },
  deps: DeliverContactDeps,
  log: LogFields,
): Promise<void> {
  const request = { deadline: deps.clock.now() + (deps.budgetMs ?? CONTACT_TASK_BUDGET_MS) };
  const undone = deps.mailboxes.suppression.forgetIfSuppressed(deps.client, [pushed], {
    clock: deps.clock,
    request,
  });
  for await (const { forget } of undone) {
    deps.logger.warn('add_contact.erased_during_call', {
      ...log,
      forget: forget.kind,
      finish_task: forget.kind === 'pending' ? forget.finishTask : undefined,
    });
  }
}

/**
 * The queue's pace is MailerLite's budget, shared: 120 requests a minute per account. This worker takes
 * 115 of them (one upsert a task), which leaves 5 a minute to the operator's sync (up to 50 contacts a
 * request in a batch) and to the unsubscribe path's forgets; every MailerLite client also waits out a
 * 429's Retry-After, so an overlap costs time, not contacts.
 *
 * MAILERLITE_TASKS_PER_MINUTE overrides it, read when the functions are loaded (functions/.env.<project>;
 * the benchmark compresses MailerLite's minute with it). Not a firebase-functions param: those have no
 * fractional numbers, and a rate per second is one.
 */
export const MAILERLITE_TASKS_PER_MINUTE = positiveNumber(process.env.MAILERLITE_TASKS_PER_MINUTE, 115);

/**
 * How long one task may take (its reads, the upsert, a short Retry-After) before the concurrency, not the
 * rate, starts to limit the queue.
 */
export const CONTACT_TASK_SECONDS = 3;

/**
 * Tasks in flight at once: enough that the rate is the limit while each takes up to CONTACT_TASK_SECONDS
 * (Little's law: in flight = rate x time), and at least 6. At 115 a minute that is 6; a rate raised (or a
 * benchmark's compressed minute) gets the same headroom per task, instead of a queue that falls behind its
 * rate as soon as a task takes longer than 6 / rate seconds.
 */
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
    const { client, groups } = mailerLiteFromParams();
    const db = await adminFirestore();
    await handleDeliverContact(request.data, {
      retryCount: request.retryCount,
      db,
      client,
      groups,
      clock: systemClock,
      logger: cloudLogger,
      mailboxes: mailboxesFromParams(db, finishErasureOnCloudTasks),
    });
  },
);
