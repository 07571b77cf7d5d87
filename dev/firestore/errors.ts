import { status as GRPC } from '@grpc/grpc-js';

/** A canonical status name of google.rpc.Code, other than OK. */
export type StatusName = Exclude<keyof typeof GRPC, 'OK'>;

/** The HTTP status Google's REST front end answers for each code (google/rpc/code.proto), by code number. */
const HTTP_STATUS = [
  200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401,
] as const;

export function isStatusName(value: unknown): value is StatusName {
  return typeof value === 'string' && value !== 'OK' && typeof GRPC[value as StatusName] === 'number';
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
    return HTTP_STATUS[this.grpcCode] ?? 500;
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
