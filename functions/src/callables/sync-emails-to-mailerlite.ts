import '../global-options';
import type { FieldPath, Firestore } from 'firebase-admin/firestore';
import { HttpsError, onCall } from 'firebase-functions/v2/https';
import { withAppCheck } from '../app-check';
import { type Clock, systemClock } from '../clock';
import { CALLABLES, type SyncReply } from '../contract';
import { adminFirestore, firestoreSdk } from '../firestore';
import { cloudLogger, type Logger } from '../logs';
import type { MailerLiteClient } from '../mailerlite/client';
import { mailerLiteFromParams } from '../mailerlite/from-params';
import type { GroupConfig } from '../mailerlite/groups';
import {
  DEFAULTS,
  intParam,
  MAILBOX_KEY_SECRET,
  MAILERLITE_API_KEY,
  SYNC_MIN_INTERVAL_SECONDS,
  UNSUBSCRIBE_SECRET,
} from '../params';
import { finishPendingErasures } from '../privacy/pending-erasures';
import { parseSyncInput, validated } from '../schemas';
import {
  DEFAULT_SYNC_OPTIONS,
  runSync,
  type SyncFailure,
  type SyncOptions,
  type SyncProgressEvent,
} from '../sync/run';

/** The function's timeout: the longest an HTTPS function may run. */
export const SYNC_TIMEOUT_SECONDS = 540;
/** The run stops starting work this long before the timeout, to write its cursor and answer. */
export const SYNC_STOP_MARGIN_MS = 15_000;

export interface SyncDeps {
  db: Firestore;
  client: MailerLiteClient;
  groups: GroupConfig;
  clock: Clock;
  logger: Logger;
  /** Clock ms when the platform ends the invocation. */
  deadline: number;
  stopMarginMs?: number;
  options?: Partial<SyncOptions>;
  /** Observes the run's steps; tests throw from it to crash the run between two steps. */
  onProgress?: (event: SyncProgressEvent) => void | Promise<void>;
  /** FieldPath.documentId(); loaded with the Firestore SDK when not given. */
  documentId?: FieldPath;
  /** UNSUBSCRIBE_SECRET: opens and seals the addresses of erasures whose MailerLite forget is pending. */
  unsubscribeSecret: string;
  /** MAILBOX_KEY_SECRET: finds the suppression list's entries (privacy/suppression.ts). */
  mailboxSecret: string;
}

const RUNNING_MESSAGE = 'A sync is already running. Try again when it has finished.';
const tooSoonMessage = (waitMs: number) => {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return `A sync finished moments ago. Try again in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`;
};

/**
 * What the reply says of a failure. /admin is public, so it names no param, group id or MailerLite
 * message: those go to the functions' logs (`sync.failed`, with `detail`), which only the operator reads.
 */
const LOGS = "The functions' logs (sync.failed) say what to fix.";
const FAILURE_MESSAGES: Record<SyncFailure, string> = {
  mailerlite_unavailable: 'MailerLite is unavailable right now.',
  mailerlite_auth: 'MailerLite refused the API key the server uses.',
  mailerlite_config: `MailerLite refused the group or field configuration the server uses. ${LOGS}`,
  lease_lost: 'Another sync took over while this one was running.',
  database: 'The database is unavailable right now.',
};

const count = (n: number) => new Intl.NumberFormat('en-US').format(n);
const emails = (n: number) => `${count(n)} ${n === 1 ? 'email' : 'emails'}`;

/**
 * Pushes stored sign-ups to MailerLite, from where the last run stopped. One run at a time (a lease);
 * a run stops before the function's deadline and the next continues; a crash anywhere loses nothing,
 * because the cursor only ever covers what MailerLite has confirmed.
 */
export async function handleSyncEmailsToMailerlite(data: unknown, deps: SyncDeps): Promise<SyncReply> {
  validated(CALLABLES.syncEmails, deps.logger, parseSyncInput, data);
  const result = await runSync({
    db: deps.db,
    documentId: deps.documentId ?? (await firestoreSdk()).FieldPath.documentId(),
    client: deps.client,
    groups: deps.groups,
    clock: deps.clock,
    logger: deps.logger,
    stopAt: deps.deadline - (deps.stopMarginMs ?? SYNC_STOP_MARGIN_MS),
    options: { ...DEFAULT_SYNC_OPTIONS, ...deps.options },
    onProgress: deps.onProgress,
    unsubscribeSecret: deps.unsubscribeSecret,
    mailboxSecret: deps.mailboxSecret,
  });
  if (result.kind === 'ran' && result.stop.kind !== 'failed') await finishErasures(deps);

  if (result.kind === 'database_unavailable') {
    throw new HttpsError('unavailable', 'The database is unavailable right now. Please try again later.');
  }
  if (result.kind === 'running') return reply(false, RUNNING_MESSAGE, 0, RUNNING_MESSAGE, null, 0, 0);
  if (result.kind === 'too_soon') {
    const message = tooSoonMessage(result.waitMs);
    return reply(false, message, 0, message, null, 0, 0);
  }
  if (result.kind === 'groups_failed') {
    const message = FAILURE_MESSAGES[result.reason];
    return reply(false, `Sync failed: ${message}`, 0, message, null, 0, 0);
  }

  const { stop, synced, rejected, skipped, remaining } = result;
  const notes = [
    rejected > 0
      ? `MailerLite refused ${count(rejected)} stored ${rejected === 1 ? 'address' : 'addresses'} as invalid.`
      : '',
    skipped > 0
      ? `${count(skipped)} stored ${skipped === 1 ? 'document was' : 'documents were'} not a sign-up and ${skipped === 1 ? 'was' : 'were'} skipped.`
      : '',
  ].filter(Boolean);
  const left =
    remaining === 0
      ? ''
      : remaining === null
        ? ' Some sign-ups remain: run the sync again to continue.'
        : ` ${count(remaining)} ${remaining === 1 ? 'sign-up remains' : 'sign-ups remain'}: run the sync again to continue.`;
  if (stop.kind === 'failed') {
    const error = `${FAILURE_MESSAGES[stop.reason]} ${emails(synced)} synced before it stopped.${left || ' Run the sync again later.'}`;
    return reply(false, error, synced, error, remaining, rejected, skipped);
  }
  const message = [`Synced ${emails(synced)} to MailerLite.${left}`, ...notes].join(' ');
  return reply(true, message, synced, null, remaining, rejected, skipped);
}

/**
 * After a run that found MailerLite working: the erasures an outage left pending are finished now rather
 * than at the next half-hourly job (privacy/pending-erasures.ts). Never changes the reply.
 */
async function finishErasures(deps: SyncDeps): Promise<void> {
  const stopAt = deps.deadline - (deps.stopMarginMs ?? SYNC_STOP_MARGIN_MS);
  try {
    await finishPendingErasures({
      db: deps.db,
      client: deps.client,
      clock: deps.clock,
      secret: deps.unsubscribeSecret,
      mailboxSecret: deps.mailboxSecret,
      logger: deps.logger,
      request: { deadline: stopAt },
      deadline: stopAt,
    });
  } catch (error) {
    deps.logger.warn('pending_erasures.failed', { error: error instanceof Error ? error.name : 'unknown' });
  }
}

function reply(
  success: boolean,
  message: string,
  synced: number,
  error: string | null,
  remaining: number | null,
  rejected: number,
  skipped: number,
): SyncReply {
  return { success, message, synced, error, remaining, rejected, skipped };
}

export const syncEmailsToMailerlite = onCall(
  // One instance is plenty (the lease admits one run at a time); the longest timeout an HTTPS
  // function has, so a run delivers as much as MailerLite's limits allow before it stops.
  {
    secrets: [MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET, MAILBOX_KEY_SECRET],
    timeoutSeconds: SYNC_TIMEOUT_SECONDS,
    maxInstances: 1,
  },
  withAppCheck(CALLABLES.syncEmails, async (request) => {
    const deadline = Date.now() + SYNC_TIMEOUT_SECONDS * 1000;
    const { client, groups } = mailerLiteFromParams();
    return handleSyncEmailsToMailerlite(request.data, {
      db: await adminFirestore(),
      client,
      groups,
      clock: systemClock,
      logger: cloudLogger,
      deadline,
      unsubscribeSecret: UNSUBSCRIBE_SECRET.value(),
      mailboxSecret: MAILBOX_KEY_SECRET.value(),
      options: {
        minIntervalMs: intParam(SYNC_MIN_INTERVAL_SECONDS, DEFAULTS.SYNC_MIN_INTERVAL_SECONDS) * 1000,
      },
    });
  }),
);
