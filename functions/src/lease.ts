import type { DocumentData, DocumentReference, Timestamp } from 'firebase-admin/firestore';
import type { Clock } from './clock';

/**
 * A document held by one caller at a time, for a limited time, with no transaction held while it works:
 * every write is compare-and-swap on the update time, so a holder taken over fails instead of overwriting.
 */

/** Where a document records its holder: each document keeps its own fields. */
export interface LeaseLayout {
  /** When the recorded holder's lease expires (clock ms), or null when nobody holds the document. */
  expiresAt(data: DocumentData): number | null;
  /** The fields that record `owner` holding the document until `expiresAt` (null: released). */
  fields(owner: string, expiresAt: Date | null): DocumentData;
}

export interface LeaseOptions {
  owner: string;
  clock: Clock;
  /** How long a claim or a renewal holds the document. */
  leaseMs: number;
  layout: LeaseLayout;
}

export type Claim<R> =
  /** `previous`: the document before the claim (undefined: it did not exist). */
  | { status: 'claimed'; lease: Lease; previous: DocumentData | undefined; tookOverExpired: boolean }
  /** Another caller holds a lease that has not expired. */
  | { status: 'held'; expiresAt: number }
  | { status: 'refused'; reason: R };

/** Another caller holds the document now: this lease expired and was taken over. */
export class LeaseLostError extends Error {
  constructor() {
    super('Another holder took the lease over.');
    this.name = 'LeaseLostError';
  }
}

// A claim that loses a race reads again; a third loss is reported as unavailable.
const CLAIM_ATTEMPTS = 3;

/** Claims `ref` unless a live lease holds it; `decide` says what else to write, or why it is not claimed. */
export async function claimLease<R = never>(
  ref: DocumentReference,
  options: LeaseOptions,
  decide: (previous: DocumentData | undefined, now: number) => { write: DocumentData } | { refuse: R },
): Promise<Claim<R>> {
  const { owner, clock, leaseMs, layout } = options;
  for (let attempt = 1; ; attempt += 1) {
    const snapshot = await ref.get();
    const now = clock.now();
    const previous = snapshot.exists ? snapshot.data() : undefined;
    const expiresAt = previous ? layout.expiresAt(previous) : null;
    if (expiresAt !== null && expiresAt > now) return { status: 'held', expiresAt };
    const decision = decide(previous, now);
    if ('refuse' in decision) return { status: 'refused', reason: decision.refuse };
    const fields = { ...decision.write, ...layout.fields(owner, new Date(now + leaseMs)) };
    try {
      const result = snapshot.updateTime
        ? await ref.update(fields, { lastUpdateTime: snapshot.updateTime })
        : await ref.create(fields);
      const lease = new Lease(ref, options, result.writeTime, now);
      return { status: 'claimed', lease, previous, tookOverExpired: expiresAt !== null };
    } catch (error) {
      if (attempt < CLAIM_ATTEMPTS && isPreconditionFailure(error)) continue;
      throw error;
    }
  }
}

/** A claimed document: renewed while its holder works, released when it is done. */
export class Lease {
  constructor(
    private readonly ref: DocumentReference,
    private readonly options: LeaseOptions,
    private lastWriteTime: Timestamp,
    /** When the lease was last written (clock ms): it must be renewed well before `leaseMs` passes. */
    public renewedAt: number,
  ) {}

  /** Writes `fields` and extends the lease; LeaseLostError if another caller holds it now. */
  renew(fields: DocumentData = {}): Promise<void> {
    const now = this.options.clock.now();
    return this.write(fields, new Date(now + this.options.leaseMs), now);
  }

  /** Writes `fields` and gives the lease back; LeaseLostError if another caller holds it now. */
  release(fields: DocumentData = {}): Promise<void> {
    return this.write(fields, null, this.options.clock.now());
  }

  private async write(fields: DocumentData, expiresAt: Date | null, now: number): Promise<void> {
    const { owner, layout } = this.options;
    try {
      const result = await this.ref.update(
        { ...fields, ...layout.fields(owner, expiresAt) },
        { lastUpdateTime: this.lastWriteTime },
      );
      this.lastWriteTime = result.writeTime;
      this.renewedAt = now;
    } catch (error) {
      if (isPreconditionFailure(error)) throw new LeaseLostError();
      throw error;
    }
  }
}

// ALREADY_EXISTS (6), FAILED_PRECONDITION (9), ABORTED (10): another caller wrote first.
function isPreconditionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 6 || code === 9 || code === 10;
}
