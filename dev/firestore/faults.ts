import { FirestoreError, invalidArgument, isStatusName, type StatusName } from './errors.ts';

// Fault injection, so tests can make the failures the product must survive really happen: a write the
// service refuses (as it refuses a write its security rules deny) and a service that stops answering.

export interface WriteRejection {
  /** A collection id (`email_subscriptions`, matching that collection at any depth) or a collection
   * path (`users/alice/orders`). */
  collection: string;
  /** How many requests writing to that collection to refuse (each refused request uses one). */
  count: number;
  /** The status to refuse with, e.g. `PERMISSION_DENIED`. */
  code: StatusName;
  /** The error message; defaults to the one Cloud Firestore gives for that status. */
  message?: string;
}

/**
 * `true` or `'hang'`: document requests are held unanswered (as a service that stopped responding)
 * until unavailability ends, then their connections are dropped. `'drop'`: each document request's
 * connection is dropped at once.
 */
export type UnavailableMode = false | true | 'hang' | 'drop';

export interface FaultState {
  rejectWrites: WriteRejection[];
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

function parseRejection(input: unknown): WriteRejection {
  if (input === null || typeof input !== 'object') throw invalidArgument('rejectWrites must be an object.');
  const { collection, count = 1, code = 'PERMISSION_DENIED', message } = input as Record<string, unknown>;
  if (typeof collection !== 'string' || collection === '') {
    throw invalidArgument('rejectWrites.collection must be a collection id or path.');
  }
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) {
    throw invalidArgument('rejectWrites.count must be a positive integer.');
  }
  if (!isStatusName(code)) throw invalidArgument(`rejectWrites.code "${String(code)}" is not a status name.`);
  if (message !== undefined && typeof message !== 'string')
    throw invalidArgument('rejectWrites.message must be a string.');
  return { collection, count, code, ...(message === undefined ? {} : { message }) };
}

export class Faults {
  private rejections: WriteRejection[] = [];
  private mode: UnavailableMode = false;
  private readonly listeners = new Set<(mode: UnavailableMode) => void>();

  /** Refuses the next `count` requests that write to `collection`. Rules add up; the oldest applies first. */
  rejectWrites(rule: WriteRejection): void {
    this.rejections.push(parseRejection(rule));
  }

  get unavailable(): UnavailableMode {
    return this.mode;
  }

  setUnavailable(mode: UnavailableMode): void {
    if (mode !== false && mode !== true && mode !== 'hang' && mode !== 'drop') {
      throw invalidArgument('unavailable must be true, false, "hang" or "drop".');
    }
    this.mode = mode;
    for (const listener of this.listeners) listener(mode);
  }

  /** Called with the new mode whenever unavailability changes (the server releases held requests). */
  onUnavailableChange(listener: (mode: UnavailableMode) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  clear(): void {
    this.rejections = [];
    this.setUnavailable(false);
  }

  state(): FaultState {
    return { rejectWrites: this.rejections.map((r) => ({ ...r })), unavailable: this.mode };
  }

  /** Applies a JSON fault request (the body of PUT /__control/faults). */
  apply(body: unknown): void {
    if (body === null || typeof body !== 'object')
      throw invalidArgument('The faults body must be a JSON object.');
    const { rejectWrites, unavailable, ...rest } = body as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length > 0) throw invalidArgument(`Unknown fault "${unknown[0]}".`);
    // Validate everything before changing anything.
    const rules =
      rejectWrites === undefined
        ? []
        : (Array.isArray(rejectWrites) ? rejectWrites : [rejectWrites]).map(parseRejection);
    if (unavailable !== undefined && ![true, false, 'hang', 'drop'].includes(unavailable as never)) {
      throw invalidArgument('unavailable must be true, false, "hang" or "drop".');
    }
    this.rejections.push(...rules);
    if (unavailable !== undefined) this.setUnavailable(unavailable as UnavailableMode);
  }

  /**
   * Given the collection paths a request writes to, returns the error to refuse it with (using up one
   * of the matching rule's count), or undefined.
   */
  takeWriteRejection(collectionPaths: readonly string[]): FirestoreError | undefined {
    const index = this.rejections.findIndex((rule) =>
      collectionPaths.some((path) =>
        rule.collection.includes('/') ? path === rule.collection : path.split('/').at(-1) === rule.collection,
      ),
    );
    const rule = this.rejections[index];
    if (!rule) return undefined;
    rule.count -= 1;
    if (rule.count <= 0) this.rejections.splice(index, 1);
    return new FirestoreError(
      rule.code,
      rule.message ?? DEFAULT_MESSAGES[rule.code] ?? `Refused with ${rule.code}.`,
    );
  }
}
