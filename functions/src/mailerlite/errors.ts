// What can go wrong talking to MailerLite, as classes a caller can tell apart with `instanceof`.
// Messages never carry a request body, an address or the API key.

export type FieldErrors = Record<string, string[]>;

export abstract class MailerLiteError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    /** Whether the same request might succeed later (the client has already retried it as allowed). */
    readonly transient = false,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** 401: the API key is missing, wrong or revoked. MailerLite answers `{"message":"Unauthenticated."}`. */
export class MailerLiteAuthError extends MailerLiteError {
  constructor(message = 'Unauthenticated.') {
    super(`MailerLite refused the API key: ${message}`, 401);
  }
}

/** 422: MailerLite's Laravel envelope `{message, errors: {field: [messages]}}`. */
export class MailerLiteValidationError extends MailerLiteError {
  constructor(
    readonly apiMessage: string,
    readonly errors: FieldErrors,
  ) {
    super(`MailerLite refused the request: ${apiMessage}`, 422);
  }
}

/** A configured group id MailerLite refused as gone: never re-resolved; the message says what to change. */
export class MailerLiteConfiguredGroupError extends MailerLiteError {
  constructor(
    readonly param: string,
    readonly groupId: string,
  ) {
    super(
      `${param} is set to the group id ${groupId}, and MailerLite has no group with that id. Set it to the id of an existing group, or to a group name (looked up, and created if missing).`,
      422,
    );
  }
}

export class MailerLiteNotFoundError extends MailerLiteError {
  constructor(path: string) {
    super(`MailerLite has no resource at ${path}.`, 404);
  }
}

/** Any other status: a 408 or 5xx may pass later; another 4xx is a request MailerLite never accepts as sent. */
export class MailerLiteRequestError extends MailerLiteError {
  constructor(status: number, apiMessage: string) {
    super(`MailerLite answered ${status}: ${apiMessage}`, status, status === 408 || status >= 500);
  }
}

/** 429, still refused after the waits the caller allowed: 120 requests a minute per account. */
export class MailerLiteRateLimitError extends MailerLiteError {
  constructor(readonly retryAfterMs: number | null) {
    super(
      retryAfterMs === null
        ? 'MailerLite is rate limiting the requests.'
        : `MailerLite is rate limiting the requests; it asks to wait ${Math.ceil(retryAfterMs / 1000)} s.`,
      429,
      true,
    );
  }
}

export class MailerLiteTimeoutError extends MailerLiteError {
  constructor(timeoutMs: number) {
    super(`MailerLite did not answer within ${timeoutMs} ms.`, null, true);
  }
}

export class MailerLiteNetworkError extends MailerLiteError {
  constructor(cause: unknown) {
    super(`MailerLite could not be reached: ${describeCause(cause)}`, null, true, { cause });
  }
}

export class MailerLiteProtocolError extends MailerLiteError {}

/** The system's code (ECONNREFUSED) of fetch's error or its cause, else its message. */
function describeCause(cause: unknown): string {
  const error = cause as { code?: unknown; message?: unknown; cause?: { code?: unknown } } | null;
  const code = error?.cause?.code ?? error?.code;
  return typeof code === 'string' ? code : String(error?.message ?? cause);
}
