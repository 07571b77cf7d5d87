import { status as GRPC } from '@grpc/grpc-js';

/** A canonical status name of google.rpc.Code, other than OK. */
export type StatusName = Exclude<keyof typeof GRPC, 'OK'>;

/** The HTTP status Google's REST front end answers for each code (google/rpc/code.proto). */
const HTTP_STATUS: Record<StatusName, number> = {
  CANCELLED: 499,
  UNKNOWN: 500,
  INVALID_ARGUMENT: 400,
  DEADLINE_EXCEEDED: 504,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  PERMISSION_DENIED: 403,
  RESOURCE_EXHAUSTED: 429,
  FAILED_PRECONDITION: 400,
  ABORTED: 409,
  OUT_OF_RANGE: 400,
  UNIMPLEMENTED: 501,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DATA_LOSS: 500,
  UNAUTHENTICATED: 401,
};

export function isStatusName(value: unknown): value is StatusName {
  return typeof value === 'string' && Object.hasOwn(HTTP_STATUS, value);
}

/** An error the stand-in answers the way Cloud Firestore answers it: a status code and a message. */
export class FirestoreError extends Error {
  constructor(
    readonly status: StatusName,
    message: string,
  ) {
    super(message);
    this.name = 'FirestoreError';
  }

  get grpcCode(): number {
    return GRPC[this.status];
  }

  get httpStatus(): number {
    return HTTP_STATUS[this.status];
  }
}

/** Refuses a feature the stand-in does not implement, naming it, so nobody gets a silently wrong answer. */
export function unimplemented(feature: string): FirestoreError {
  return new FirestoreError(
    'UNIMPLEMENTED',
    `The Firestore stand-in does not implement ${feature}. Use the Firebase Firestore emulator for it.`,
  );
}

export function invalidArgument(message: string): FirestoreError {
  return new FirestoreError('INVALID_ARGUMENT', message);
}
