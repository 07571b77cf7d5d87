import { createHash } from 'node:crypto';
import { type Clock, systemClock } from '../clock';
import type { Logger } from '../logs';
import {
  type FieldErrors,
  MailerLiteAuthError,
  MailerLiteError,
  MailerLiteNetworkError,
  MailerLiteNotFoundError,
  MailerLiteProtocolError,
  MailerLiteRateLimitError,
  MailerLiteRequestError,
  MailerLiteTimeoutError,
  MailerLiteValidationError,
} from './errors';

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
}

export interface RequestOptions {
  /** Epoch ms. No attempt starts and no wait is made past it; the last error is thrown instead. */
  deadline?: number;
  timeoutMs?: number;
  maxAttempts?: number;
  /** How many 429s are waited out: by default 5, or with a deadline as many as fit. */
  maxRateLimitWaits?: number;
}

export interface Subscriber {
  id: string;
  email: string;
  status: string;
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

/** Added to every Retry-After wait so the retry lands after the window, not on its edge. */
const RETRY_AFTER_SLACK_MS = 50;

export class MailerLiteClient {
  private readonly options: Required<Omit<MailerLiteClientOptions, 'logger'>> & { logger?: Logger };
  /** The rate-limit headers of the most recent answer that had them (the launch check prints them). */
  rateLimit: { limit: number | null; remaining: number | null } = { limit: null, remaining: null };
  /** Names the MailerLite account (URL and a hash of the key) for caches shared across calls. */
  readonly accountKey: string;

  constructor(options: MailerLiteClientOptions) {
    this.options = {
      clock: systemClock,
      timeoutMs: 10_000,
      maxAttempts: 4,
      backoffBaseMs: 500,
      backoffMaxMs: 10_000,
      ...options,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
    };
    this.accountKey = `${this.options.baseUrl} ${createHash('sha256').update(options.apiKey).digest('hex').slice(0, 16)}`;
  }

  /** One call: a 429 waited out within the deadline, a 408, 5xx or lost answer backed off, else thrown. */
  async request<T>(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<{ status: number; body: T }> {
    const { clock, logger } = this.options;
    const { deadline = Number.POSITIVE_INFINITY } = options;
    const maxAttempts = options.maxAttempts ?? this.options.maxAttempts;
    const maxRateLimitWaits =
      options.maxRateLimitWaits ?? (options.deadline === undefined ? 5 : Number.POSITIVE_INFINITY);
    let failures = 0;
    let rateLimitWaits = 0;
    for (;;) {
      const timeoutMs = Math.min(options.timeoutMs ?? this.options.timeoutMs, deadline - clock.now());
      if (timeoutMs <= 0) throw new MailerLiteTimeoutError(0);
      let error: MailerLiteError;
      let retryAfter: number | null = null;
      try {
        const { response, text } = await this.send(method, path, body, timeoutMs);
        const { status } = response;
        if (status < 300) return { status, body: parseJson(text, status, path) as T };
        error = errorFor(response, text, path, clock.now());
        retryAfter = retryAfterMs(response.headers, clock.now());
      } catch (caught) {
        if (!(caught instanceof MailerLiteError)) throw caught;
        error = caught;
      }

      let waits: number;
      if (error instanceof MailerLiteRateLimitError) {
        waits = ++rateLimitWaits;
        if (waits > maxRateLimitWaits) throw error;
      } else {
        if (!error.transient) throw error;
        waits = ++failures;
        if (waits >= maxAttempts) throw error;
      }
      const waitMs = retryAfter === null ? this.backoff(waits) : retryAfter + RETRY_AFTER_SLACK_MS;
      if (clock.now() + waitMs >= deadline) throw error;
      logger?.warn('mailerlite.retry', {
        status: error.status,
        error: error.name,
        wait_ms: Math.round(waitMs),
        failures,
        rate_limit_waits: rateLimitWaits,
      });
      await clock.sleep(waitMs);
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
      const path = `/subscribers/${encodeURIComponent(subscriber.id)}/forget`;
      await this.request('POST', path, undefined, options);
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
      const path = `/groups?${new URLSearchParams({ 'filter[name]': name, limit: '100', page: String(page) })}`;
      const { body } = await this.request<{ data: unknown; meta?: { last_page?: unknown } }>(
        'GET',
        path,
        undefined,
        options,
      );
      if (!Array.isArray(body?.data))
        throw new MailerLiteProtocolError(`GET ${path} answered without a data array.`, 200);
      groups.push(...body.data.map((group) => toGroup(group, path)));
      const lastPage = Number(body.meta?.last_page ?? page);
      if (!Number.isFinite(lastPage) || page >= lastPage || body.data.length === 0) break;
    }
    return groups;
  }

  async createGroup(name: string, options?: RequestOptions): Promise<Group> {
    // One attempt: a lost answer sent again could make a second group (a 429 is still waited out).
    const response = await this.request<{ data: unknown }>(
      'POST',
      '/groups',
      { name },
      { ...options, maxAttempts: 1 },
    );
    return toGroup(response.body?.data, '/groups');
  }

  /** One attempt, body included, under one timeout: a server that stalls mid-body is a timeout too. */
  private async send(
    method: string,
    path: string,
    body: unknown,
    timeoutMs: number,
  ): Promise<{ response: Response; text: string }> {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const response = await fetch(`${this.options.baseUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${this.options.apiKey}`,
          'Content-Type': 'application/json',
          Accept: 'application/json',
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      const limit = headerNumber(response.headers, 'x-ratelimit-limit');
      const remaining = headerNumber(response.headers, 'x-ratelimit-remaining');
      if (limit !== null || remaining !== null) this.rateLimit = { limit, remaining };
      return { response, text: await response.text() };
    } catch (error) {
      if (signal.aborted) throw new MailerLiteTimeoutError(timeoutMs);
      throw new MailerLiteNetworkError(error);
    }
  }

  private backoff(failures: number): number {
    const { backoffBaseMs, backoffMaxMs } = this.options;
    const ceiling = Math.min(backoffMaxMs, backoffBaseMs * 2 ** Math.max(0, failures - 1));
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

function parseJson(text: string, status: number, path: string): unknown {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new MailerLiteProtocolError(`MailerLite answered ${path} with a body that is not JSON.`, status);
  }
}

function errorFor(response: Response, text: string, path: string, now: number): MailerLiteError {
  let body: { message?: unknown; errors?: unknown } | null;
  try {
    body = parseJson(text, response.status, path) as typeof body;
  } catch {
    body = null; // An HTML error page from a proxy: the status says enough.
  }
  const message = typeof body?.message === 'string' ? body.message : response.statusText || 'no message';
  const { status } = response;
  if (status === 401) return new MailerLiteAuthError(message);
  if (status === 404) return new MailerLiteNotFoundError(path.split('?')[0] ?? path);
  if (status === 422) return new MailerLiteValidationError(message, fieldErrors(body?.errors));
  if (status === 429) return new MailerLiteRateLimitError(retryAfterMs(response.headers, now));
  return new MailerLiteRequestError(status, message);
}

function fieldErrors(errors: unknown): FieldErrors {
  if (!errors || typeof errors !== 'object' || Array.isArray(errors)) return {};
  return Object.fromEntries(
    Object.entries(errors).map(([field, messages]) => [field, [messages].flat().map(String)]),
  );
}

/** Ids exceed 2^53: a number has lost digits, and is refused rather than address the wrong group. */
function toId(value: unknown, what: string): string {
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
    groups: Array.isArray(subscriber.groups) ? subscriber.groups.map((group) => toGroup(group, path)) : [],
  };
}

/** A time as MailerLite's subscriber fields take it (`opted_in_at`): UTC, `YYYY-MM-DD HH:MM:SS`. */
export function mailerLiteTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}
