import { z } from 'zod';
import { parseWith } from '../http.ts';
import { FirestoreError, isStatusName, type StatusName } from './errors.ts';

// Fault injection, so tests can make the failures the product must survive really happen: a write the
// service refuses (as it refuses a write its security rules deny) and a service that stops answering.

const rejection = z.strictObject({
  /** A collection id (`email_subscriptions`, matching that collection at any depth) or a collection path. */
  collection: z.string().min(1),
  /** How many requests writing to that collection to refuse (each refused request uses one). */
  count: z.number().int().min(1).default(1),
  /** The status to refuse with, e.g. `PERMISSION_DENIED`. */
  code: z
    .string()
    .refine(isStatusName, 'a status name such as PERMISSION_DENIED')
    .default('PERMISSION_DENIED'),
  /** The error message; defaults to the one Cloud Firestore gives for that status. */
  message: z.string().optional(),
});

/**
 * `true` or `'hang'`: document requests are held unanswered (as a service that stopped responding) until
 * unavailability ends, then their connections are dropped. `'drop'`: each document request's connection is
 * dropped at once.
 */
const unavailable = z.union([z.boolean(), z.enum(['hang', 'drop'])]);

/** The body of PUT /__control/faults. */
const faultsBody = z.strictObject({
  rejectWrites: z.union([rejection, z.array(rejection)]).optional(),
  unavailable: unavailable.optional(),
});

export type WriteRejection = z.input<typeof rejection> & { code?: StatusName };
export type UnavailableMode = z.infer<typeof unavailable>;

export interface FaultState {
  rejectWrites: z.infer<typeof rejection>[];
  unavailable: UnavailableMode;
}

const DEFAULT_MESSAGES: Partial<Record<StatusName, string>> = {
  PERMISSION_DENIED: 'Missing or insufficient permissions.',
  UNAVAILABLE: 'The service is currently unavailable.',
  RESOURCE_EXHAUSTED: 'Quota exceeded.',
  DEADLINE_EXCEEDED: 'Deadline exceeded.',
  INTERNAL: 'Internal error encountered.',
  UNAUTHENTICATED: 'Request had invalid authentication credentials.',
};

export class Faults {
  private rejections: FaultState['rejectWrites'] = [];
  private mode: UnavailableMode = false;
  /** Requests held unanswered while unavailable: each entry drops its connection. */
  private readonly held = new Set<() => void>();

  /** Refuses the next `count` requests that write to `collection`. Rules add up; the oldest applies first. */
  rejectWrites(rule: WriteRejection): void {
    this.apply({ rejectWrites: rule });
  }

  get unavailable(): UnavailableMode {
    return this.mode;
  }

  setUnavailable(mode: UnavailableMode): void {
    this.apply({ unavailable: mode });
  }

  clear(): void {
    this.rejections = [];
    this.setUnavailable(false);
  }

  state(): FaultState & { heldRequests: number } {
    return {
      rejectWrites: this.rejections.map((r) => ({ ...r })),
      unavailable: this.mode,
      heldRequests: this.held.size,
    };
  }

  /** Applies a fault request (the body of PUT /__control/faults); a malformed one throws and changes nothing. */
  apply(body: unknown): void {
    const { rejectWrites, unavailable } = parseWith(faultsBody, body);
    this.rejections.push(...[rejectWrites ?? []].flat());
    if (unavailable === undefined) return;
    this.mode = unavailable;
    // A request sent to a service that was not answering never gets a late success: lifting the fault (or
    // switching to drop) drops the held ones.
    if (unavailable === false || unavailable === 'drop') this.releaseHeld();
  }

  /** Document requests held unanswered right now. */
  get heldCount(): number {
    return this.held.size;
  }

  /**
   * True when a document request may be answered. Otherwise `drop` has been called, or will be once the
   * fault is lifted; `onClose` lets a request the client abandons be forgotten.
   */
  admit(drop: () => void, onClose: (forget: () => void) => void): boolean {
    if (this.mode === false) return true;
    if (this.mode === 'drop') {
      drop();
      return false;
    }
    this.held.add(drop);
    onClose(() => this.held.delete(drop));
    return false;
  }

  releaseHeld(): void {
    const drops = [...this.held];
    this.held.clear();
    for (const drop of drops) drop();
  }

  /**
   * Given the collection paths a request writes to, returns the error to refuse it with (using up one of
   * the matching rule's count), or undefined.
   */
  takeWriteRejection(collectionPaths: readonly string[]): FirestoreError | undefined {
    const rule = this.rejections.find((r) =>
      collectionPaths.some((path) =>
        r.collection.includes('/') ? path === r.collection : path.split('/').at(-1) === r.collection,
      ),
    );
    if (!rule) return undefined;
    if (--rule.count === 0) this.rejections.splice(this.rejections.indexOf(rule), 1);
    const code = rule.code as StatusName;
    return new FirestoreError(code, rule.message ?? DEFAULT_MESSAGES[code] ?? `Refused with ${code}.`);
  }
}
