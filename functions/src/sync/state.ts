import { randomUUID } from 'node:crypto';
import type { Firestore, Timestamp } from 'firebase-admin/firestore';
import type { Clock } from '../clock';
import { millisOf } from '../firestore';
import { claimLease, type Lease, type LeaseLayout } from '../lease';
import type { Logger } from '../logs';
import type { SyncOptions, SyncResult } from './types';

/** `_sync/mailerlite`: the sync's lease and cursor, in one document. Server-only (rules deny clients). */
export const SYNC_STATE_COLLECTION = '_sync';
export const SYNC_STATE_DOC = 'mailerlite';

/** A position in `email_subscriptions` ordered by (created_at, document id): everything up to it is in MailerLite. */
export interface SyncCursor {
  created_at: Timestamp;
  id: string;
}

export interface SyncLease {
  owner: string;
  expires_at: Date | Timestamp;
}

export interface SyncStateDoc {
  cursor: SyncCursor | null;
  lease: SyncLease | null;
  updated_at: Date | Timestamp;
  last_run?: Record<string, unknown>;
}

const SYNC_LEASE: LeaseLayout = {
  expiresAt: (data) => {
    const lease = (data as Partial<SyncStateDoc>).lease;
    return lease ? millisOf(lease.expires_at) : null;
  },
  fields: (owner, expiresAt) => ({ lease: expiresAt ? { owner, expires_at: expiresAt } : null }),
};

export type AcquireResult =
  | { acquired: true; state: SyncState; cursor: SyncCursor | null; tookOverExpiredLease: boolean }
  | { acquired: false; leaseExpiresAt: number }
  | { acquired: false; tooSoonUntil: number };

/**
 * Claims the sync's lease for one run (see ../lease.ts): refused while another run's lease is live,
 * taken over once it has expired, and refused until `minIntervalMs` after the last run ended unless that
 * run stopped at its deadline with work left (pressing Sync again then continues it). The public /admin
 * page can start a sync: the interval is what keeps a script from turning it into a stream of MailerLite
 * requests. The run then moves the cursor only through the lease it holds.
 */
export async function acquireSyncState(
  db: Firestore,
  options: { owner: string; clock: Clock; leaseMs: number; minIntervalMs: number },
): Promise<AcquireResult> {
  const ref = db.collection(SYNC_STATE_COLLECTION).doc(SYNC_STATE_DOC);
  const claim = await claimLease<{ acquired: false; tooSoonUntil: number }>(
    ref,
    { ...options, layout: SYNC_LEASE },
    (previous, now) => {
      const lastRun = (previous as Partial<SyncStateDoc> | undefined)?.last_run;
      const endedAt = lastRun?.finished_at ? millisOf(lastRun.finished_at) : null;
      if (endedAt !== null && lastRun?.outcome !== 'deadline' && now < endedAt + options.minIntervalMs) {
        return { refuse: { acquired: false, tooSoonUntil: endedAt + options.minIntervalMs } };
      }
      return {
        write: previous ? { updated_at: new Date(now) } : { updated_at: new Date(now), cursor: null },
      };
    },
  );
  if (claim.status === 'held') return { acquired: false, leaseExpiresAt: claim.expiresAt };
  if (claim.status === 'refused') return claim.reason;
  return {
    acquired: true,
    state: new SyncState(claim.lease, options.clock),
    cursor: (claim.previous as Partial<SyncStateDoc> | undefined)?.cursor ?? null,
    tookOverExpiredLease: claim.tookOverExpired,
  };
}

/**
 * A run's start: the lease claimed under a fresh owner (acquireSyncState), or why the run cannot start,
 * logged (another run holds the lease, the last one ended too recently) or the database unavailable.
 */
export async function startRun(deps: {
  db: Firestore;
  clock: Clock;
  logger: Logger;
  options: Pick<SyncOptions, 'leaseMs' | 'minIntervalMs'>;
}): Promise<
  | { kind: 'started'; state: SyncState; cursor: SyncCursor | null }
  | Extract<SyncResult, { kind: 'running' | 'too_soon' | 'database_unavailable' }>
> {
  const { clock, logger } = deps;
  let acquired: AcquireResult;
  try {
    acquired = await acquireSyncState(deps.db, {
      owner: randomUUID(),
      clock,
      leaseMs: deps.options.leaseMs,
      minIntervalMs: deps.options.minIntervalMs,
    });
  } catch {
    return { kind: 'database_unavailable' };
  }
  if (!acquired.acquired) {
    if ('tooSoonUntil' in acquired) {
      logger.info('sync.refused_too_soon', { wait_ms: acquired.tooSoonUntil - clock.now() });
      return { kind: 'too_soon', waitMs: acquired.tooSoonUntil - clock.now() };
    }
    logger.info('sync.refused_running', { lease_expires_in_ms: acquired.leaseExpiresAt - clock.now() });
    return { kind: 'running' };
  }
  if (acquired.tookOverExpiredLease) logger.warn('sync.lease_taken_over');
  logger.info('sync.started', { resumed: acquired.cursor !== null });
  return { kind: 'started', state: acquired.state, cursor: acquired.cursor };
}

/** The cursor and the lease of a run that holds it: every write renews the lease or gives it back. */
export class SyncState {
  constructor(
    private readonly lease: Lease,
    private readonly clock: Clock,
  ) {}

  /** When the lease was last written (clock ms). */
  get leaseRenewedAt(): number {
    return this.lease.renewedAt;
  }

  /** Moves the cursor (when given) and renews the lease. */
  checkpoint(cursor: SyncCursor | undefined): Promise<void> {
    const fields: Record<string, unknown> = { updated_at: new Date(this.clock.now()) };
    if (cursor) fields.cursor = { created_at: cursor.created_at, id: cursor.id };
    return this.lease.renew(fields);
  }

  /** Gives the lease back and records how the run ended. */
  release(lastRun: Record<string, unknown>): Promise<void> {
    return this.lease.release({ updated_at: new Date(this.clock.now()), last_run: lastRun });
  }
}
