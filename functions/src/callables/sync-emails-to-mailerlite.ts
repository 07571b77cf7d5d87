import '../global-options';
import { randomUUID } from 'node:crypto';
import type { FieldPath, Firestore } from 'firebase-admin/firestore';
import { HttpsError, onCall } from 'firebase-functions/v2/https';
import { withAppCheck } from '../app-check';
import { type Clock, systemClock } from '../clock';
import { adminFirestore, firestoreSdk } from '../firestore';
import { cloudLogger, type Logger } from '../logs';
import type { MailerLiteClient } from '../mailerlite/client';
import { mailerLiteFromParams } from '../mailerlite/from-params';
import { type GroupConfig, reResolveGroupId, resolveGroupId } from '../mailerlite/groups';
import { mailerLiteHttpsError } from '../mailerlite/https-error';
import { MAILERLITE_API_KEY } from '../params';
import { parseSyncInput, validated } from '../schemas';
import {
  DEFAULT_SYNC_OPTIONS,
  type SyncFailure,
  type SyncOptions,
  type SyncProgressEvent,
  SyncRun,
} from '../sync/run';
import { SyncState } from '../sync/state';

/** The function's timeout: the longest an HTTPS function may run. */
export const SYNC_TIMEOUT_SECONDS = 540;
/** The run stops starting work this long before the timeout, to write its cursor and answer. */
export const SYNC_STOP_MARGIN_MS = 15_000;

/** What the admin page reads: success, message, synced, error. The rest is for operators and tests. */
export interface SyncReply {
  success: boolean;
  message: string;
  /** Distinct addresses MailerLite confirmed in this run. */
  synced: number;
  error: string | null;
  /** Sign-ups still after the cursor (null when Firestore could not count them). */
  remaining: number | null;
  /** Stored addresses MailerLite refused as invalid (passed, not retried). */
  rejected: number;
  /** Stored documents that are not sign-ups (skipped). */
  skipped: number;
}

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
}

const RUNNING_MESSAGE = 'A sync is already running. Try again when it has finished.';

const FAILURE_MESSAGES: Record<SyncFailure, string> = {
  mailerlite_unavailable: 'MailerLite is unavailable right now.',
  mailerlite_auth: 'MailerLite refused the API key the server uses.',
  mailerlite_config: 'MailerLite refused the group or field configuration the server uses.',
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
  validated('sync-emails-to-mailerlite', deps.logger, parseSyncInput, data);
  const options = { ...DEFAULT_SYNC_OPTIONS, ...deps.options };
  const stopAt = deps.deadline - (deps.stopMarginMs ?? SYNC_STOP_MARGIN_MS);
  const state = new SyncState(deps.db, randomUUID(), deps.clock, options.leaseMs);

  let acquired: Awaited<ReturnType<SyncState['acquire']>>;
  try {
    acquired = await state.acquire();
  } catch {
    throw new HttpsError('unavailable', 'The database is unavailable right now. Please try again later.');
  }
  if (!acquired.acquired) {
    deps.logger.info('sync.refused_running', {
      lease_expires_in_ms: acquired.leaseExpiresAt - deps.clock.now(),
    });
    return reply(false, RUNNING_MESSAGE, 0, RUNNING_MESSAGE, null, 0, 0);
  }
  if (acquired.tookOverExpiredLease) deps.logger.warn('sync.lease_taken_over');
  deps.logger.info('sync.started', { resumed: acquired.cursor !== null });

  let run: SyncRun | undefined;
  let outcome = 'crashed';
  try {
    let groupIds: Record<'updates' | 'club', string>;
    try {
      const request = { deadline: stopAt };
      groupIds = {
        updates: await resolveGroupId(deps.client, deps.groups, 'updates', request),
        club: await resolveGroupId(deps.client, deps.groups, 'club', request),
      };
    } catch (error) {
      outcome = 'failed';
      const message = mailerLiteHttpsError(error).message;
      deps.logger.error('sync.failed', {
        reason: 'groups',
        error: error instanceof Error ? error.name : 'unknown',
      });
      return reply(false, `Sync failed: ${message}`, 0, message, null, 0, 0);
    }

    run = new SyncRun(
      {
        db: deps.db,
        documentId: deps.documentId ?? (await firestoreSdk()).FieldPath.documentId(),
        client: deps.client,
        groupIds,
        reResolveGroup: (type, refusedId, request) =>
          reResolveGroupId(deps.client, deps.groups, type, refusedId, request),
        state,
        clock: deps.clock,
        logger: deps.logger,
        stopAt,
        options,
        onProgress: deps.onProgress,
      },
      acquired.cursor,
    );
    const stop = await run.execute();
    outcome = stop.kind === 'failed' ? stop.reason : stop.kind;
    const synced = run.syncedEmails.size;
    const remaining = stop.kind === 'done' && run.unsettledRead === 0 ? 0 : await run.remainingAfterCursor();
    const notes = [
      run.rejected > 0
        ? `MailerLite refused ${count(run.rejected)} stored ${run.rejected === 1 ? 'address' : 'addresses'} as invalid.`
        : '',
      run.skipped > 0
        ? `${count(run.skipped)} stored ${run.skipped === 1 ? 'document was' : 'documents were'} not a sign-up and ${run.skipped === 1 ? 'was' : 'were'} skipped.`
        : '',
    ].filter(Boolean);
    const left =
      remaining === 0
        ? ''
        : remaining === null
          ? ' Some sign-ups remain: run the sync again to continue.'
          : ` ${count(remaining)} ${remaining === 1 ? 'sign-up remains' : 'sign-ups remain'}: run the sync again to continue.`;

    deps.logger.info('sync.finished', {
      outcome,
      synced,
      rejected: run.rejected,
      skipped: run.skipped,
      erased: run.erased,
      read: run.read,
      remaining,
      requests: deps.client.requestCount,
    });
    if (stop.kind === 'failed') {
      const error = `${stop.detail ?? FAILURE_MESSAGES[stop.reason]} ${emails(synced)} synced before it stopped.${left || ' Run the sync again later.'}`;
      return reply(false, error, synced, error, remaining, run.rejected, run.skipped);
    }
    const message = [`Synced ${emails(synced)} to MailerLite.${left}`, ...notes].join(' ');
    return reply(true, message, synced, null, remaining, run.rejected, run.skipped);
  } finally {
    // Best effort: if this write fails, the lease simply expires.
    await state
      .release({
        outcome,
        synced: run?.syncedEmails.size ?? 0,
        rejected: run?.rejected ?? 0,
        finished_at: new Date(deps.clock.now()),
      })
      .catch(() => undefined);
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
  { secrets: [MAILERLITE_API_KEY], timeoutSeconds: SYNC_TIMEOUT_SECONDS, maxInstances: 1 },
  withAppCheck('sync-emails-to-mailerlite', async (request) => {
    const deadline = Date.now() + SYNC_TIMEOUT_SECONDS * 1000;
    const { client, groups } = mailerLiteFromParams();
    return handleSyncEmailsToMailerlite(request.data, {
      db: await adminFirestore(),
      client,
      groups,
      clock: systemClock,
      logger: cloudLogger,
      deadline,
    });
  }),
);
