import type { DocumentReference, DocumentSnapshot, Firestore, Timestamp } from 'firebase-admin/firestore';
import type { Clock } from '../clock';

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

export type AcquireResult =
  | { acquired: true; cursor: SyncCursor | null; tookOverExpiredLease: boolean }
  | { acquired: false; leaseExpiresAt: number };

/** Another run holds the lease now: ours expired, or was taken over. This run must stop writing. */
export class LeaseLostError extends Error {
  constructor() {
    super('Another sync took over the lease.');
    this.name = 'LeaseLostError';
  }
}

/**
 * The lease and the cursor, moved by compare-and-swap: every write carries the update time of the
 * write before it as a precondition, so a run whose lease was taken over fails its next write
 * instead of moving the cursor under the new owner's feet. No transaction is held across the
 * MailerLite calls.
 */
export class SyncState {
  private readonly ref: DocumentReference;
  private lastWriteTime: Timestamp | null = null;
  private lastWriteAt = 0;

  constructor(
    db: Firestore,
    private readonly owner: string,
    private readonly clock: Clock,
    private readonly leaseMs: number,
  ) {
    this.ref = db.collection(SYNC_STATE_COLLECTION).doc(SYNC_STATE_DOC);
  }

  /** When the lease was last written (clock ms): it must be renewed well before `leaseMs` passes. */
  get leaseRenewedAt(): number {
    return this.lastWriteAt;
  }

  async acquire(): Promise<AcquireResult> {
    const snapshot: DocumentSnapshot = await this.ref.get();
    const now = this.clock.now();
    const state = snapshot.exists ? (snapshot.data() as SyncStateDoc) : null;
    const lease = state?.lease ?? null;
    const leaseExpiresAt = lease ? millis(lease.expires_at) : 0;
    if (lease && leaseExpiresAt > now) return { acquired: false, leaseExpiresAt };
    const fields = { lease: this.lease(now), updated_at: new Date(now) };
    try {
      const result = snapshot.exists
        ? await this.ref.update(fields, { lastUpdateTime: snapshot.updateTime as Timestamp })
        : await this.ref.create({ ...fields, cursor: null });
      this.wrote(result.writeTime, now);
    } catch (error) {
      // Another run acquired it between our read and our write.
      if (isPreconditionFailure(error)) return { acquired: false, leaseExpiresAt: now + this.leaseMs };
      throw error;
    }
    return { acquired: true, cursor: state?.cursor ?? null, tookOverExpiredLease: lease !== null };
  }

  /** Moves the cursor (when given) and renews the lease. */
  async checkpoint(cursor: SyncCursor | undefined): Promise<void> {
    const now = this.clock.now();
    const fields: Record<string, unknown> = { lease: this.lease(now), updated_at: new Date(now) };
    if (cursor) fields.cursor = { created_at: cursor.created_at, id: cursor.id };
    await this.write(fields, now);
  }

  /** Gives the lease back and records how the run ended. */
  async release(lastRun: Record<string, unknown>): Promise<void> {
    const now = this.clock.now();
    await this.write({ lease: null, updated_at: new Date(now), last_run: lastRun }, now);
  }

  private async write(fields: Record<string, unknown>, now: number): Promise<void> {
    if (!this.lastWriteTime) throw new LeaseLostError();
    try {
      const result = await this.ref.update(fields, { lastUpdateTime: this.lastWriteTime });
      this.wrote(result.writeTime, now);
    } catch (error) {
      if (isPreconditionFailure(error)) throw new LeaseLostError();
      throw error;
    }
  }

  private lease(now: number): SyncLease {
    return { owner: this.owner, expires_at: new Date(now + this.leaseMs) };
  }

  private wrote(writeTime: Timestamp, now: number): void {
    this.lastWriteTime = writeTime;
    this.lastWriteAt = now;
  }
}

// gRPC ALREADY_EXISTS (6) from create(), FAILED_PRECONDITION (9) from a stale update time.
function isPreconditionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 6 || code === 9;
}

export function millis(value: Date | Timestamp | null | undefined): number {
  if (!value) return 0;
  return value instanceof Date ? value.getTime() : value.toMillis();
}
