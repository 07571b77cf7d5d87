import { type Clock, systemClock } from '../clock';
import { type Logger, sha256Hex } from '../logs';
import {
  type FieldErrors,
  MailerLiteAuthError,
  MailerLiteError,
  MailerLiteNetworkError,
  MailerLiteNotFoundError,
  MailerLiteProtocolError,
  MailerLiteRateLimitError,
  MailerLiteRequestError,
  MailerLiteServerError,
  MailerLiteTimeoutError,
  MailerLiteValidationError,
} from './errors';
import { classify } from './meaning';

/** MailerLite's API over fetch: the official SDK brings axios and has no retry, 429 handling or timeouts. */

export interface MailerLiteClientOptions {
  apiKey: string;
  /** e.g. https://connect.mailerlite.com/api (no trailing slash needed). */
  baseUrl: string;
  clock?: Clock;
  logger?: Logger;
  /** Per attempt. Default 10 s. */
  timeoutMs?: number;
  /** Attempts for failures other than 429 (408, 5xx, timeouts, lost connections). Default 4. */
  maxAttempts?: number;
  /** First backoff when the server gives no Retry-After; doubles per attempt, full jitter. Default 500 ms. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Added to every Retry-After wait so the retry lands after the window, not on its edge. Default 50 ms. */
  retryAfterSlackMs?: number;
  /** How many 429s one call waits out when it has no deadline. Default 5. */
  maxRateLimitWaits?: number;
}

export interface RequestOptions {
  /** Epoch ms. No attempt starts and no wait is made past it; the last error is thrown instead. */
  deadline?: number;
  signal?: AbortSignal;
  /** Whether a lost answer may be sent again: not creating a group (retried only after a 429). */
  idempotent?: boolean;
  timeoutMs?: number;
  maxAttempts?: number;
  /** Override of how many 429s are waited out; with a deadline the default is "as many as fit". */
  maxRateLimitWaits?: number;
}

export interface RateLimitSnapshot {
  limit: number | null;
  remaining: number | null;
  observedAt: number;
}

export interface MailerLiteResponse<T> {
  status: number;
  body: T;
}

export type MailerLiteMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface Subscriber {
  id: string;
  email: string;
  status: string;
  fields: Record<string, string | number | null>;
  groups: Group[];
}

export interface Group {
  id: string;
  name: string;
}

export interface UpsertSubscriberInput {
  email: string;
  fields?: Record<string, string | number | null>;
  /** Group ids to add the subscriber to; groups it is already in are kept. */
  groups?: string[];
  /** When the person opted in, UTC, as MailerLite takes it: `YYYY-MM-DD HH:MM:SS` (see mailerLiteTime). */
  opted_in_at?: string;
  /** Left out, MailerLite keeps an existing subscriber's status and makes a new one active. */
  status?: string;
}

export interface UpsertResult {
  created: boolean;
  subscriber: Subscriber;
}

export class MailerLiteClient {
  private readonly baseUrl: string;
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly retryAfterSlackMs: number;
  private readonly maxRateLimitWaits: number;
  private lastRateLimit: RateLimitSnapshot = { limit: null, remaining: null, observedAt: 0 };
  /** Names the MailerLite account (URL and a hash of the key) for caches shared across calls. */
  readonly accountKey: string;

  constructor(private readonly options: MailerLiteClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.accountKey = `${this.baseUrl} ${sha256Hex(options.apiKey).slice(0, 16)}`;
    this.clock = options.clock ?? systemClock;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxAttempts = options.maxAttempts ?? 4;
    this.backoffBaseMs = options.backoffBaseMs ?? 500;
    this.backoffMaxMs = options.backoffMaxMs ?? 10_000;
    this.retryAfterSlackMs = options.retryAfterSlackMs ?? 50;
    this.maxRateLimitWaits = options.maxRateLimitWaits ?? 5;
  }

  /** The rate-limit headers of the most recent answer (the launch check prints them). */
  get rateLimit(): RateLimitSnapshot {
    return this.lastRateLimit;
  }

  /** One call: a 429 waited out within the deadline, `retry` backed off (idempotent only), else thrown. */
  async request<T>(
    method: MailerLiteMethod,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<MailerLiteResponse<T>> {
    const idempotent = options.idempotent ?? true;
    const maxAttempts = options.maxAttempts ?? this.maxAttempts;
    const maxRateLimitWaits =
      options.maxRateLimitWaits ??
      (options.deadline === undefined ? this.maxRateLimitWaits : Number.POSITIVE_INFINITY);
    let failures = 0;
    let rateLimitWaits = 0;
    for (;;) {
      options.signal?.throwIfAborted();
      const remainingMs =
        options.deadline === undefined ? Number.POSITIVE_INFINITY : options.deadline - this.clock.now();
      const timeoutMs = Math.min(options.timeoutMs ?? this.timeoutMs, remainingMs);
      if (timeoutMs <= 0) throw new MailerLiteTimeoutError(0);

      let error: MailerLiteError;
      let retryAfter: number | null = null;
      try {
        const response = await this.send(method, path, body, { timeoutMs, signal: options.signal });
        if (classify(response.status) === 'ok') {
          return { status: response.status, body: parseJson(response, path) as T };
        }
        const now = this.clock.now();
        error = errorFor(response, path, now);
        retryAfter = retryAfterMs(response.headers, now);
      } catch (caught) {
        // send() throws its own timeout or lost connection, or the caller's abort as it is.
        if (!(caught instanceof MailerLiteError)) throw caught;
        options.signal?.throwIfAborted();
        error = caught;
      }

      let waitMs: number;
      const meaning = classify(error);
      if (meaning === 'rate_limited') {
        rateLimitWaits += 1;
        if (rateLimitWaits > maxRateLimitWaits) throw error;
        waitMs = retryAfter === null ? this.backoff(rateLimitWaits) : retryAfter + this.retryAfterSlackMs;
      } else if (meaning === 'retry') {
        if (!idempotent) throw error;
        failures += 1;
        waitMs = retryAfter === null ? this.backoff(failures) : retryAfter + this.retryAfterSlackMs;
      } else {
        throw error;
      }

      if (failures >= maxAttempts) throw error;
      if (options.deadline !== undefined && this.clock.now() + waitMs >= options.deadline) throw error;
      this.options.logger?.warn('mailerlite.retry', {
        status: error.status,
        error: error.name,
        wait_ms: Math.round(waitMs),
        failures,
        rate_limit_waits: rateLimitWaits,
      });
      await this.clock.sleep(waitMs, options.signal);
    }
  }

  async upsertSubscriber(input: UpsertSubscriberInput, options?: RequestOptions): Promise<UpsertResult> {
    const response = await this.request<{ data: unknown }>('POST', '/subscribers', input, options);
    return {
      created: response.status === 201,
      subscriber: toSubscriber(response.body?.data, '/subscribers'),
    };
  }

  async getSubscriber(idOrEmail: string, options?: RequestOptions): Promise<Subscriber | null> {
    const path = `/subscribers/${encodeURIComponent(idOrEmail)}`;
    try {
      const response = await this.request<{ data: unknown }>('GET', path, undefined, options);
      return toSubscriber(response.body?.data, path);
    } catch (error) {
      if (error instanceof MailerLiteNotFoundError) return null;
      throw error;
    }
  }

  /** MailerLite's GDPR erasure of a subscriber found by address; false when it has none. */
  async forgetSubscriber(email: string, options?: RequestOptions): Promise<boolean> {
    const subscriber = await this.getSubscriber(email, options);
    if (!subscriber) return false;
    try {
      await this.request(
        'POST',
        `/subscribers/${encodeURIComponent(subscriber.id)}/forget`,
        undefined,
        options,
      );
      return true;
    } catch (error) {
      // Forgotten between the look-up and the erasure, by a second click or a contact task's clean-up.
      if (error instanceof MailerLiteNotFoundError) return false;
      throw error;
    }
  }

  /** Every group whose name contains `name` (MailerLite's filter is a substring match), all pages. */
  async findGroups(name: string, options?: RequestOptions): Promise<Group[]> {
    const groups: Group[] = [];
    for (let page = 1; page <= 100; page += 1) {
      const query = new URLSearchParams({ 'filter[name]': name, limit: '100', page: String(page) });
      const path = `/groups?${query}`;
      const response = await this.request<{ data: unknown; meta?: { last_page?: unknown } }>(
        'GET',
        path,
        undefined,
        options,
      );
      const data = response.body?.data;
      if (!Array.isArray(data))
        throw new MailerLiteProtocolError(`GET ${path} answered without a data array.`, 200);
      groups.push(...data.map((group) => toGroup(group, path)));
      const lastPage = Number(response.body?.meta?.last_page ?? page);
      if (!Number.isFinite(lastPage) || page >= lastPage || data.length === 0) break;
    }
    return groups;
  }

  async createGroup(name: string, options?: RequestOptions): Promise<Group> {
    const response = await this.request<{ data: unknown }>(
      'POST',
      '/groups',
      { name },
      { ...options, idempotent: false },
    );
    return toGroup(response.body?.data, '/groups');
  }

  /** One attempt, body included, under one timeout: a server that stalls mid-body is a timeout too. */
  private async send(
    method: MailerLiteMethod,
    path: string,
    body: unknown,
    { timeoutMs, signal }: { timeoutMs: number; signal: AbortSignal | undefined },
  ): Promise<RawResponse> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${this.options.apiKey}`,
          'Content-Type': 'application/json',
          Accept: 'application/json',
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: combined,
      });
      this.observeRateLimit(response.headers);
      const text = await response.text();
      return { status: response.status, statusText: response.statusText, headers: response.headers, text };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted) throw new MailerLiteTimeoutError(timeoutMs);
      throw new MailerLiteNetworkError(error);
    }
  }

  private observeRateLimit(headers: Headers): void {
    const limit = headerNumber(headers, 'x-ratelimit-limit');
    const remaining = headerNumber(headers, 'x-ratelimit-remaining');
    if (limit === null && remaining === null) return;
    this.lastRateLimit = { limit, remaining, observedAt: this.clock.now() };
  }

  private backoff(failures: number): number {
    const ceiling = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** Math.max(0, failures - 1));
    // Full jitter: spreads the retries of several instances hit by the same outage.
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }
}

function headerNumber(headers: Headers, name: string): number | null {
  const value = headers.get(name);
  if (value === null || value.trim() === '') return null;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : null;
}

/** Retry-After as delay-seconds (fractions tolerated) or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(headers: Headers, now: number): number | null {
  const value = headers.get('retry-after')?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

interface RawResponse {
  status: number;
  statusText: string;
  headers: Headers;
  text: string;
}

function parseJson(response: RawResponse, path: string): unknown {
  if (response.text.trim() === '') return null;
  try {
    return JSON.parse(response.text);
  } catch {
    throw new MailerLiteProtocolError(
      `MailerLite answered ${path} with a body that is not JSON.`,
      response.status,
    );
  }
}

function errorFor(response: RawResponse, path: string, now: number): MailerLiteError {
  let body: unknown = null;
  try {
    body = parseJson(response, path);
  } catch {
    // An HTML error page from a proxy: the status says enough.
  }
  const apiMessage = (body as { message?: unknown } | null)?.message;
  const message = typeof apiMessage === 'string' ? apiMessage : response.statusText || 'no message';
  const status = response.status;
  if (status === 401) return new MailerLiteAuthError(message);
  if (status === 404) return new MailerLiteNotFoundError(path.split('?')[0] ?? path);
  if (status === 422) return new MailerLiteValidationError(message, fieldErrors(body));
  if (status === 429) {
    return new MailerLiteRateLimitError(retryAfterMs(response.headers, now));
  }
  if (status === 408 || status >= 500) return new MailerLiteServerError(status);
  return new MailerLiteRequestError(status, message);
}

function fieldErrors(body: unknown): FieldErrors {
  const errors = (body as { errors?: unknown } | null)?.errors;
  const result: FieldErrors = {};
  if (errors && typeof errors === 'object' && !Array.isArray(errors)) {
    for (const [field, messages] of Object.entries(errors)) {
      result[field] = Array.isArray(messages) ? messages.map(String) : [String(messages)];
    }
  }
  return result;
}

/** Ids exceed 2^53: a number has lost digits, and is refused rather than address the wrong group. */
export function toId(value: unknown, what: string): string {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  throw new MailerLiteProtocolError(`MailerLite answered ${what} without a usable string id.`, null);
}

function toGroup(value: unknown, path: string): Group {
  const group = value as { id?: unknown; name?: unknown } | null;
  if (!group || typeof group.name !== 'string') {
    throw new MailerLiteProtocolError(`MailerLite answered ${path} without a group.`, null);
  }
  return { id: toId(group.id, path), name: group.name };
}

function toSubscriber(value: unknown, path: string): Subscriber {
  const subscriber = value as Partial<Record<keyof Subscriber, unknown>> | null;
  if (!subscriber || typeof subscriber.email !== 'string') {
    throw new MailerLiteProtocolError(`MailerLite answered ${path} without a subscriber.`, null);
  }
  return {
    id: toId(subscriber.id, path),
    email: subscriber.email,
    status: typeof subscriber.status === 'string' ? subscriber.status : 'unknown',
    fields: (subscriber.fields ?? {}) as Subscriber['fields'],
    groups: Array.isArray(subscriber.groups) ? subscriber.groups.map((group) => toGroup(group, path)) : [],
  };
}

/** A time as MailerLite's subscriber fields take it (`opted_in_at`): UTC, `YYYY-MM-DD HH:MM:SS`. */
export function mailerLiteTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}
