import '../global-options';
import type { DocumentSnapshot, Firestore } from 'firebase-admin/firestore';
import { onTaskDispatched } from 'firebase-functions/v2/tasks';
import { type Clock, systemClock } from '../clock';
import { SIGNUPS } from '../contract';
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
import { type AddContactInput, parseAddContactInput } from '../schemas';
import { MAILBOX_KEY_FIELD, mailboxSignups } from '../signups/lookup';
import { parseSignupTask, parseTask, positiveNumber, RETRY, RetryLater, withDatabase } from './queue';
import { isSettled, type PartEvent, partOf, RowDelivery } from './row-delivery';

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
}

/** Sign-ups of one mailbox and list read for the consent time: bounded whatever a bot stored. */
export const CONTACT_ROWS_READ = 20;

/** What a task came to; a failure Cloud Tasks should retry is thrown (RetryLater) instead. */
export type ContactOutcome =
  | 'delivered'
  | 'already_delivered'
  | 'settled'
  | 'gone'
  | 'suppressed'
  | 'refused'
  /** A task of a round older than the part's (delivery/part-life.ts): it does nothing. */
  | 'stale'
  | 'dropped';

/**
 * Upserts a stored sign-up into the group of its list, with its source as a field and the mailbox's first
 * sign-up of that list as MailerLite's consent time. The task names the row (delivery/queue.ts); the row's
 * trigger enqueued it (delivery/index-signup.ts), or the reconciler did again (delivery/reconcile-deliveries.ts).
 * The address, its list and its source are the row's: nothing a caller sent reaches MailerLite. A row gone
 * (erased, or past retention) is not delivered; a part already settled (a task of an earlier round that ran
 * late) costs the read.
 *
 * One MailerLite contact per mailbox (privacy/mailerlite-contacts.ts): the mailbox's record, claimed for the
 * push, names the spelling MailerLite knows (the first stored spelling pushed, until a bare spelling comes
 * after a `+tag` one: the contact then moves to it, once) and the lists it has; a list already there costs no
 * request. MailerLite's upsert adds groups and keeps the ones the subscriber is in, so
 * someone who joined through both forms ends up in both groups. A failure a retry can fix (429, 5xx, a
 * timeout, the database, another task pushing the same mailbox) throws RetryLater, counted on the row. Only
 * the person ends the part (delivery/part-life.ts): MailerLite refusing the address (a 422 on the email) skips
 * it, `refused`. Our setup or MailerLite refusing us (401, 403, 404, a group or a field, an answer it does not
 * document) throws RetryLater too: the row shows the part waiting, `configuration`, with the code, and Cloud
 * Tasks tries again (backoff at most 10 minutes) until an operator has fixed it.
 */
export async function handleDeliverContact(task: unknown, deps: DeliverContactDeps): Promise<ContactOutcome> {
  const input = parseTask(task, parseSignupTask, deps.logger, 'add_contact.task_malformed');
  if (!input) return 'dropped';
  const row = await withDatabase(() => deps.db.collection(SIGNUPS).doc(input.signup).get());
  if (!row.exists) {
    deps.logger.info('add_contact.signup_gone', {});
    return 'gone';
  }
  const part = partOf(row.data(), 'contact');
  if (isSettled(part)) return 'settled';
  // A task of a past round does nothing: the round the part is on has its own task.
  if (part && input.round !== undefined && input.round < part.round) return 'stale';
  const round = input.round ?? part?.round ?? 0;
  const delivery = new RowDelivery(row.ref, 'contact');
  const apply = (event: PartEvent) => withDatabase(() => delivery.apply(event, deps.clock.now()));
  let stored: AddContactInput;
  try {
    stored = parseAddContactInput({
      email: row.get('email'),
      subscription_type: row.get('subscription_type'),
      source: row.get('source'),
    });
  } catch {
    await apply({ kind: 'skipped', round, reason: 'not_an_address' });
    return 'dropped';
  }
  const log = {
    ...emailFields(stored.email),
    subscription_type: stored.subscriptionType,
    source: stored.source,
  };
  let retry: RetryLater;
  try {
    const outcome = await addStoredContact(row, stored, deps, log);
    if (outcome === 'suppressed') await apply({ kind: 'skipped', round, reason: 'suppressed' });
    else await apply({ kind: 'done', round });
    return outcome;
  } catch (error) {
    if (error instanceof RetryLater) retry = error;
    else if (!(error instanceof MailerLiteError)) {
      deps.logger.warn('add_contact.failed', { ...log, error: 'database', code: 'unavailable' });
      retry = new RetryLater('The database is unavailable.', 'database');
    } else {
      const { code, message, retry: transient } = failureOf(error);
      deps.logger.warn('add_contact.failed', {
        ...log,
        error: error.name,
        status: error.status ?? undefined,
        code,
        // Our configuration (a group, the key) is what an operator must fix: say which. Other messages
        // can quote MailerLite on the contact, so they stay out.
        message: code === 'failed-precondition' ? message : undefined,
      });
      const lastError = `mailerlite ${error.status ?? error.name}`;
      // MailerLite refused the address itself (a 422 on the email): the person's own, which ends the part.
      if (code === 'invalid-argument') {
        await apply({ kind: 'skipped', round, reason: 'refused' });
        return 'refused';
      }
      // Anything else is MailerLite's or our setup's (the key, a group, a field, an answer it does not
      // document): the part waits, saying so, and Cloud Tasks tries again until it is fixed.
      retry = transient
        ? new RetryLater('MailerLite is unavailable.', lastError)
        : new RetryLater('MailerLite refused our setup.', lastError, 'configuration');
    }
  }
  await delivery.recordRetry(round, retry, deps.clock.now());
  throw retry;
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
  // Another task pushes this mailbox (perhaps for the other list): look again once it is done.
  if (claim.status === 'in_progress')
    throw new RetryLater('Another task is pushing this mailbox.', 'in_progress');
  // Looked at again now that this task holds the record: the erasure writes the suppression entry before it
  // reads the record, so one that read it before this claim is seen here, and one that reads it after sees
  // the claim and forgets again once the push is over (privacy/erasure.ts). Whichever dies where, no push
  // starts after an erasure that could miss it.
  if ((await suppression.among([input.email])).size > 0) {
    await claim.abandon();
    deps.logger.info('add_contact.suppressed', log);
    return 'suppressed';
  }

  // The mailbox's first sign-up of this list is when the person opted in to it; for a contact that moves to
  // the bare spelling, its first sign-up of any list (the consent the tagged contact carried).
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
    // Moving to the bare spelling: the bare subscriber takes what MailerLite holds for the tagged one (its
    // groups, and the person's own refusal), so the move neither drops a list nor undoes an unsubscribe.
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
    // Only once the bare subscriber holds it all: a failure before leaves the tagged one, and the record
    // naming it, for the next claim to move again (the upsert is idempotent).
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

  // The person left (one-click unsubscribe) while this task was pushing: undo the push. Should this task die
  // first, the erasure saw the push's lease on the mailbox's record and forgets again once it has run out
  // (privacy/erasure.ts).
  await forgetIfErased({ email: input.email, address: claim.email }, deps, log);
  return 'delivered';
}

/**
 * The statuses a contact keeps when it moves to the bare spelling: the person's own refusal (an unsubscribe
 * from a campaign, a spam complaint). A bounce is the tagged spelling's (a provider without plus addressing),
 * which is why the contact moves, so it is not carried.
 */
const KEPT_STATUSES: ReadonlySet<string> = new Set(['unsubscribed', 'junk']);

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
 * 115 of them (one upsert a task; the operator's Sync hands its contacts to this same queue), which leaves 5
 * a minute to the unsubscribe path's forgets; every MailerLite client also waits out a 429's Retry-After, so
 * an overlap costs time, not contacts.
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
      db,
      client,
      groups,
      clock: systemClock,
      logger: cloudLogger,
      mailboxes: mailboxesFromParams(db, finishErasureOnCloudTasks),
    });
  },
);
