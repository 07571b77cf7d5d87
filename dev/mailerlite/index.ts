// MailerLite API stand-in: an HTTP server that answers the endpoints the functions use the way
// connect.mailerlite.com/api does (auth, validation, status codes, ids, batch semantics, rate limits), with its
// state readable and faults injectable by tests, over HTTP under /__control/ or through the returned object.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultFaultBody, type FaultsSnapshot, MailerLiteFaults } from './faults.ts';
import { FixedWindowLimiter } from './rate-limit.ts';
import { type ApiContext, type ApiResult, matchRoute, unmatchedResult } from './routes.ts';
import { type FieldValue, formatTimestamp, type ImportJob, Store, type SubscriberStatus } from './store.ts';
import { isPlainObject } from './validation.ts';

export type { DropRule, FailRule, FaultsSnapshot } from './faults.ts';
export { MailerLiteFaults } from './faults.ts';

export interface MailerLiteLimits {
  /** Length of a rate-limit window in ms (MailerLite: one minute). */
  windowMs: number;
  /** Requests per window across all endpoints (MailerLite: 120). */
  requestsPerWindow: number;
  /** Import creations per window: group imports and batches made only of upserts (MailerLite: 5). */
  importsPerWindow: number;
  /** How long an import takes before its progress reports done and its subscribers exist. */
  importDelayMs: number;
  /**
   * Retry-After with millisecond precision (e.g. "0.734") instead of MailerLite's whole seconds: for
   * benchmarks that compress the window to a second or so, where whole seconds would distort the waits.
   */
  fractionalRetryAfter: boolean;
}

export interface MailerLiteStandInOptions extends Partial<MailerLiteLimits> {
  host?: string;
  port?: number;
  apiKey?: string;
  /** Custom field keys the account has, on top of MailerLite's default fields (name, last_name, ...). */
  customFields?: string[];
  /** No request lines on stdout. */
  quiet?: boolean;
  /** Where request lines go when not quiet (default console.log). */
  log?: (line: string) => void;
  /** Clock for rate-limit windows, timestamps and import completion (default Date.now). */
  now?: () => number;
}

export interface SubscriberState {
  id: string;
  email: string;
  status: SubscriberStatus;
  source: string;
  fields: Record<string, FieldValue>;
  groups: string[];
  createdAt: string;
  updatedAt: string;
  /** `opted_in_at` as the client sent it ("YYYY-MM-DD HH:MM:SS"), or null. */
  optedInAt: string | null;
}

export interface GroupState {
  id: string;
  name: string;
  subscriberCount: number;
  createdAt: string;
}

export interface ImportState {
  id: string;
  groupId: string;
  total: number;
  done: boolean;
  imported: number;
  updated: number;
  unchanged: number;
  invalid: number;
  duplicate: number;
}

export interface RequestLogEntry {
  /** ISO time the request arrived. */
  time: string;
  method: string;
  /** Path and query, with any e-mail address in it masked. */
  path: string;
  /** Status answered, or 0 when the connection was closed unanswered (a dropped request, or "down"). */
  status: number;
  durationMs: number;
  /** Set when the answer came from an injected fault rather than the API. */
  fault?: 'status' | 'drop' | 'down';
  /** Number of requests inside a POST /api/batch. */
  batchSize?: number;
}

export interface MailerLiteState {
  subscribers: SubscriberState[];
  groups: GroupState[];
  imports: ImportState[];
  /** Most recent last; bounded to the last 10,000 requests. */
  requests: RequestLogEntry[];
  limits: MailerLiteLimits;
  rateLimit: { remaining: number; importsRemaining: number; resetInMs: number };
  faults: FaultsSnapshot;
}

export interface MailerLiteStandIn {
  readonly host: string;
  readonly port: number;
  /** "http://127.0.0.1:<port>" */
  readonly url: string;
  /** "http://127.0.0.1:<port>/api": the value for MAILERLITE_BASE_URL. */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** A fresh snapshot on every read. */
  readonly state: MailerLiteState;
  readonly faults: MailerLiteFaults;
  readonly limits: MailerLiteLimits;
  /** Changes limits and starts fresh rate-limit windows. */
  setLimits(limits: Partial<MailerLiteLimits>): void;
  /** Creates a group directly (no request, no rate limit) and returns its id. */
  addGroup(name: string): string;
  /** Clears subscribers, groups, imports, the request log, rate-limit windows and faults. */
  reset(): void;
  stop(): Promise<void>;
}

const REQUEST_LOG_LIMIT = 10_000;
const BODY_LIMIT_BYTES = 20 * 1024 * 1024;

const DEFAULT_LIMITS: MailerLiteLimits = {
  windowMs: 60_000,
  requestsPerWindow: 120,
  importsPerWindow: 5,
  importDelayMs: 100,
  fractionalRetryAfter: false,
};

// Addresses of minors may appear in paths (GET /api/subscribers/{email}); printed and logged paths carry a
// masked form only.
const EMAIL_IN_PATH = /[^/?&=]+(?:@|%40)[^/?&=]+/gi;

export function maskEmailsInPath(path: string): string {
  return path.replace(EMAIL_IN_PATH, (match) => {
    const [local = '', domain = ''] = decodeURIComponentSafe(match).split('@');
    return `${local.slice(0, 1)}***@${domain.slice(0, 1)}***`;
  });
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

export async function startMailerLiteStandIn(
  options: MailerLiteStandInOptions = {},
): Promise<MailerLiteStandIn> {
  const host = options.host ?? '127.0.0.1';
  const apiKey = options.apiKey ?? 'dev-mailerlite-key';
  const now = options.now ?? Date.now;
  const log = options.quiet ? () => {} : (options.log ?? ((line: string) => console.log(line)));
  const limits: MailerLiteLimits = {
    windowMs: options.windowMs ?? DEFAULT_LIMITS.windowMs,
    requestsPerWindow: options.requestsPerWindow ?? DEFAULT_LIMITS.requestsPerWindow,
    importsPerWindow: options.importsPerWindow ?? DEFAULT_LIMITS.importsPerWindow,
    importDelayMs: options.importDelayMs ?? DEFAULT_LIMITS.importDelayMs,
    fractionalRetryAfter: options.fractionalRetryAfter ?? DEFAULT_LIMITS.fractionalRetryAfter,
  };
  validateLimits(limits);

  const store = new Store(options.customFields ?? []);
  const faults = new MailerLiteFaults();
  // Both limits are per account (one API key here). MailerLite documents batching as the way to stay within
  // the 120/minute limit, so a POST /api/batch counts as one request against it whatever it contains; only
  // the import limit looks inside (a batch of nothing but POST api/subscribers counts as one import).
  const globalLimiter = new FixedWindowLimiter(limits.requestsPerWindow, limits.windowMs);
  const importLimiter = new FixedWindowLimiter(limits.importsPerWindow, limits.windowMs);
  const requestLog: RequestLogEntry[] = [];
  let baseUrl = '';

  function record(entry: RequestLogEntry): void {
    requestLog.push(entry);
    if (requestLog.length > REQUEST_LOG_LIMIT) requestLog.splice(0, requestLog.length - REQUEST_LOG_LIMIT);
    const extra = entry.fault
      ? ` (fault: ${entry.fault})`
      : entry.batchSize
        ? ` (batch of ${entry.batchSize})`
        : '';
    log(
      `[mailerlite] ${entry.method} ${entry.path} ${entry.status || 'closed'} ${entry.durationMs}ms${extra}`,
    );
  }

  function rateHeaders(): Record<string, string> {
    return {
      'X-RateLimit-Limit': String(globalLimiter.limit),
      'X-RateLimit-Remaining': String(globalLimiter.remaining(now())),
    };
  }

  async function handleApi(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    started: number,
  ): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const loggedPath = maskEmailsInPath(url.pathname + url.search);
    const entry = (status: number, extra: Partial<RequestLogEntry> = {}): RequestLogEntry => ({
      time: new Date(started).toISOString(),
      method,
      path: loggedPath,
      status,
      durationMs: Date.now() - started,
      ...extra,
    });

    if (faults.down) {
      req.socket.destroy();
      record(entry(0, { fault: 'down' }));
      return;
    }
    if (faults.takeDrop(url.pathname)) {
      req.socket.destroy();
      record(entry(0, { fault: 'drop' }));
      return;
    }

    let rawBody: Buffer;
    try {
      rawBody = await readBody(req);
    } catch {
      send(res, { status: 413, body: { message: 'Payload Too Large' } });
      record(entry(413));
      return;
    }
    if (faults.latencyMs > 0) await sleep(faults.latencyMs);

    const fault = faults.takeFailure(method, url.pathname, false);
    if (fault) {
      const headers: Record<string, string> = { ...fault.headers };
      if (fault.status === 429) {
        headers['Retry-After'] ??= '1';
        headers['X-RateLimit-Limit'] ??= String(globalLimiter.limit);
        headers['X-RateLimit-Remaining'] ??= '0';
      }
      send(res, { status: fault.status, body: fault.body ?? defaultFaultBody(fault.status), headers });
      record(entry(fault.status, { fault: 'status' }));
      return;
    }

    const match = matchRoute(method, url.pathname);
    if (match.kind !== 'found') {
      const result = unmatchedResult(match, method, url.pathname);
      send(res, result);
      record(entry(result.status));
      return;
    }

    // The recorded 401 from the real API carries no X-RateLimit headers: unauthenticated requests are not
    // counted against the account.
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      send(res, { status: 401, body: { message: 'Unauthenticated.' } });
      record(entry(401));
      return;
    }

    const at = now();
    store.settleImports(at);
    if (!globalLimiter.tryHit(at)) {
      send(res, {
        status: 429,
        body: { message: 'Too Many Attempts.' },
        headers: {
          ...rateHeaders(),
          'Retry-After': globalLimiter.retryAfter(at, limits.fractionalRetryAfter),
        },
      });
      record(entry(429));
      return;
    }

    const body = parseJsonObject(rawBody);
    const ctx: ApiContext = {
      store,
      now: at,
      baseUrl,
      importLimiter,
      importDelayMs: limits.importDelayMs,
      fractionalRetryAfter: limits.fractionalRetryAfter,
      faults,
      inBatch: false,
    };
    let result: ApiResult;
    try {
      result = match.handler(ctx, match.params, url.searchParams, body);
    } catch (error) {
      console.error('[mailerlite] handler failed:', error);
      result = { status: 500, body: { message: 'Server Error' } };
    }
    send(res, { ...result, headers: { ...rateHeaders(), ...result.headers } });
    const batchSize =
      url.pathname === '/api/batch' && Array.isArray(body.requests) && result.status === 200
        ? body.requests.length
        : undefined;
    record(entry(result.status, batchSize === undefined ? {} : { batchSize }));
  }

  function snapshot(): MailerLiteState {
    const at = now();
    store.settleImports(at);
    return {
      subscribers: [...store.subscribers.values()].map((s) => ({
        id: s.id,
        email: s.email,
        status: s.status,
        source: s.source,
        fields: { ...s.fields },
        groups: [...s.groupIds],
        createdAt: formatTimestamp(s.createdAt) ?? '',
        updatedAt: formatTimestamp(s.updatedAt) ?? '',
        optedInAt: s.optedInAt,
      })),
      groups: [...store.groups.values()].map((g) => ({
        id: g.id,
        name: g.name,
        subscriberCount: [...store.subscribers.values()].filter((s) => s.groupIds.includes(g.id)).length,
        createdAt: formatTimestamp(g.createdAt) ?? '',
      })),
      imports: [...store.imports.values()].map(importState),
      requests: requestLog.map((e) => ({ ...e })),
      limits: { ...limits },
      rateLimit: {
        remaining: globalLimiter.remaining(at),
        importsRemaining: importLimiter.remaining(at),
        resetInMs: globalLimiter.msUntilReset(at),
      },
      faults: faults.snapshot(),
    };
  }

  function setLimits(next: Partial<MailerLiteLimits>): void {
    const merged = { ...limits, ...next };
    validateLimits(merged);
    Object.assign(limits, merged);
    globalLimiter.limit = limits.requestsPerWindow;
    globalLimiter.windowMs = limits.windowMs;
    importLimiter.limit = limits.importsPerWindow;
    importLimiter.windowMs = limits.windowMs;
    globalLimiter.reset();
    importLimiter.reset();
  }

  function reset(): void {
    store.clear();
    requestLog.length = 0;
    globalLimiter.reset();
    importLimiter.reset();
    faults.clear();
  }

  async function handleControl(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const route = `${method} ${url.pathname}`;
    const readJson = async () => JSON.parse((await readBody(req)).toString('utf8') || '{}') as unknown;
    try {
      switch (route) {
        case 'GET /__control/health':
          return send(res, { status: 200, body: { ok: true } });
        case 'GET /__control/state':
          return send(res, { status: 200, body: snapshot() });
        case 'POST /__control/reset':
          reset();
          return send(res, { status: 204, body: null });
        case 'GET /__control/faults':
          return send(res, { status: 200, body: faults.snapshot() });
        case 'PUT /__control/faults':
          faults.applyJson(await readJson());
          return send(res, { status: 200, body: faults.snapshot() });
        case 'DELETE /__control/faults':
          faults.clear();
          return send(res, { status: 204, body: null });
        case 'GET /__control/limits':
          return send(res, { status: 200, body: limits });
        case 'PUT /__control/limits': {
          const json = await readJson();
          if (!isPlainObject(json)) throw new TypeError('limits body must be a JSON object');
          setLimits(json as Partial<MailerLiteLimits>);
          return send(res, { status: 200, body: limits });
        }
        default:
          return send(res, { status: 404, body: { message: `No control route ${route}.` } });
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return send(res, { status: 400, body: { message } });
    }
  }

  const server = createServer((req, res) => {
    const started = Date.now();
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const handler = url.pathname.startsWith('/__control/')
      ? handleControl(req, res, url)
      : handleApi(req, res, url, started);
    handler.catch((error: unknown) => {
      console.error('[mailerlite] request failed:', error);
      if (!res.headersSent) send(res, { status: 500, body: { message: 'Server Error' } });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host}:${port}`;
  baseUrl = `${url}/api`;

  return {
    host,
    port,
    url,
    baseUrl,
    apiKey,
    get state() {
      return snapshot();
    },
    faults,
    get limits() {
      return { ...limits };
    },
    setLimits,
    addGroup: (name: string) => store.createGroup(name, now()).id,
    reset,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function importState(job: ImportJob): ImportState {
  const r = job.result;
  return {
    id: job.id,
    groupId: job.groupId,
    total: job.rows.length,
    done: r !== null,
    imported: r?.imported.length ?? 0,
    updated: r?.updated.length ?? 0,
    unchanged: r?.unchanged.length ?? 0,
    invalid: r?.invalid.length ?? 0,
    duplicate: r?.duplicate.length ?? 0,
  };
}

function validateLimits(limits: MailerLiteLimits): void {
  for (const key of ['windowMs', 'requestsPerWindow', 'importsPerWindow'] as const) {
    if (!Number.isInteger(limits[key]) || limits[key] < 1)
      throw new TypeError(`${key} must be a positive integer`);
  }
  if (!Number.isFinite(limits.importDelayMs) || limits.importDelayMs < 0) {
    throw new TypeError('importDelayMs must be a non-negative number');
  }
  if (typeof limits.fractionalRetryAfter !== 'boolean')
    throw new TypeError('fractionalRetryAfter must be a boolean');
}

function send(res: ServerResponse, result: ApiResult): void {
  const headers: Record<string, string> = { 'Cache-Control': 'no-cache, private', ...result.headers };
  if (result.status === 204) {
    res.writeHead(204, headers).end();
    return;
  }
  const payload = JSON.stringify(result.body);
  res
    .writeHead(result.status, {
      ...headers,
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(payload)),
    })
    .end(payload);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        reject(new Error('body too large'));
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Laravel reads a body that is not a JSON object as no input at all, so validation reports what is missing. */
function parseJsonObject(raw: Buffer): Record<string, unknown> {
  if (raw.length === 0) return {};
  try {
    const parsed: unknown = JSON.parse(raw.toString('utf8'));
    return isPlainObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
