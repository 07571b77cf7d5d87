import '../global-options';
import type { FieldPath } from 'firebase-admin/firestore';
import { HttpsError, onCall } from 'firebase-functions/v2/https';
import { withAppCheck } from '../app-check';
import { systemClock } from '../clock';
import { CALLABLES, type SyncReply } from '../contract';
import { adminFirestore, firestoreSdk } from '../firestore';
import { cloudLogger } from '../logs';
import { mailerLiteFromParams } from '../mailerlite/from-params';
import {
  DEFAULTS,
  intParam,
  MAILBOX_KEY_SECRET,
  MAILERLITE_API_KEY,
  SYNC_MIN_INTERVAL_SECONDS,
  UNSUBSCRIBE_SECRET,
} from '../params';
import { mailboxesFromParams } from '../privacy/mailboxes';
import { parseSyncInput, validated } from '../schemas';
import { runSync } from '../sync/run';
import { DEFAULT_SYNC_OPTIONS, type SyncFailure, type SyncOptions, type SyncWorld } from '../sync/types';
import { finishErasureOnCloudTasks } from '../tasks/finish-erasure';

/** The function's timeout: the longest an HTTPS function may run. */
export const SYNC_TIMEOUT_SECONDS = 540;
/** The run stops starting work this long before the timeout, to write its cursor and answer. */
export const SYNC_STOP_MARGIN_MS = 15_000;

/** The run's outside world (sync/run.ts), with when the invocation ends instead of when the run stops. */
export interface SyncDeps extends SyncWorld {
  /** Clock ms when the platform ends the invocation. */
  deadline: number;
  stopMarginMs?: number;
  options?: Partial<SyncOptions>;
  /** FieldPath.documentId(); loaded with the Firestore SDK when not given. */
  documentId?: FieldPath;
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
    ...deps,
    documentId: deps.documentId ?? (await firestoreSdk()).FieldPath.documentId(),
    stopAt: stopAt(deps),
    options: { ...DEFAULT_SYNC_OPTIONS, ...deps.options },
  });

  if (result.kind === 'database_unavailable') {
    throw new HttpsError('unavailable', 'The database is unavailable right now. Please try again later.');
  }
  if (result.kind === 'running')
    return reply({ success: false, message: RUNNING_MESSAGE, error: RUNNING_MESSAGE });
  if (result.kind === 'too_soon') {
    const message = tooSoonMessage(result.waitMs);
    return reply({ success: false, message, error: message });
  }
  if (result.kind === 'groups_failed') {
    const message = FAILURE_MESSAGES[result.reason];
    return reply({ success: false, message: `Sync failed: ${message}`, error: message });
  }

  const { stop, synced, rejected, skipped, remaining } = result;
  const counts = { synced, remaining, rejected, skipped };
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
    return reply({ success: false, message: error, error, ...counts });
  }
  const message = [`Synced ${emails(synced)} to MailerLite.${left}`, ...notes].join(' ');
  return reply({ success: true, message, ...counts });
}

/** Clock ms after which the run starts no request: its margin before the invocation ends. */
function stopAt(deps: SyncDeps): number {
  return deps.deadline - (deps.stopMarginMs ?? SYNC_STOP_MARGIN_MS);
}

/** A reply; what it does not say is none: nothing synced, rejected or skipped, no error, `remaining` unknown. */
function reply(said: Pick<SyncReply, 'success' | 'message'> & Partial<SyncReply>): SyncReply {
  return {
    success: said.success,
    message: said.message,
    synced: said.synced ?? 0,
    error: said.error ?? null,
    remaining: said.remaining ?? null,
    rejected: said.rejected ?? 0,
    skipped: said.skipped ?? 0,
  };
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
    const db = await adminFirestore();
    return handleSyncEmailsToMailerlite(request.data, {
      db,
      client,
      groups,
      clock: systemClock,
      logger: cloudLogger,
      deadline,
      mailboxes: mailboxesFromParams(db, finishErasureOnCloudTasks),
      options: {
        minIntervalMs: intParam(SYNC_MIN_INTERVAL_SECONDS, DEFAULTS.SYNC_MIN_INTERVAL_SECONDS) * 1000,
      },
    });
  }),
);
