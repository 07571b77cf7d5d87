// MailerLite API stand-in: an HTTP server that answers the endpoints the functions use the way
// connect.mailerlite.com/api does (auth, validation, status codes, ids, rate limits), its state readable and
// faults injectable over the stand-ins' control surface (stand-ins/http.ts) or through the returned object.

import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { CONTROL_PREFIX, close, listen, parseWith, readBody, sendJson, serveControl } from '../http.ts';
import { defaultFaultBody, MailerLiteFaults } from './faults.ts';
import { FixedWindowLimiter } from './rate-limit.ts';
import { type ApiResult, decodeSafely, matchRoute } from './routes.ts';
import { type Group, Store, type Subscriber } from './store.ts';
import { isPlainObject } from './validation.ts';

const limitsSchema = z.strictObject({
  /** Length of a rate-limit window in ms (MailerLite: one minute). */
  windowMs: z.number().int().min(1).default(60_000),
  /** Requests per window across all endpoints (MailerLite: 120). */
  requestsPerWindow: z.number().int().min(1).default(120),
});

export type MailerLiteLimits = z.infer<typeof limitsSchema>;

export interface MailerLiteStandInOptions extends Partial<MailerLiteLimits> {
  host?: string;
  port?: number;
  apiKey?: string;
  /** Custom field keys the account has, beside MailerLite's default fields (name, last_name, ...). */
  customFields?: string[];
  /** Keep the account's subscribers and groups here: loaded at start, written when stopped. */
  dataDir?: string;
  /** No request lines; else they go to `log` (default console.log). */
  quiet?: boolean;
  log?: (line: string) => void;
  /** Clock for rate-limit windows and timestamps (default Date.now). */
  now?: () => number;
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
  /** Set when the answer was an injected fault's. */
  fault?: 'status' | 'drop' | 'down';
}

/** What GET /__control/state answers (and `state` returns). */
export type MailerLiteState = MailerLiteStandIn['state'];

/** The running stand-in; `state` is a fresh snapshot on every read, `baseUrl` the value for MAILERLITE_BASE_URL. */
export type MailerLiteStandIn = Awaited<ReturnType<typeof startMailerLiteStandIn>>;

const REQUEST_LOG_LIMIT = 10_000;
const BODY_LIMIT_BYTES = 20 * 1024 * 1024;

// Addresses of minors may appear in paths (GET /api/subscribers/{email}); printed and logged paths carry a
// masked form only.
const EMAIL_IN_PATH = /[^/?&=]+(?:@|%40)[^/?&=]+/gi;

export function maskEmailsInPath(path: string): string {
  return path.replace(EMAIL_IN_PATH, (match) => {
    const [local = '', domain = ''] = decodeSafely(match).split('@');
    return `${local.slice(0, 1)}***@${domain.slice(0, 1)}***`;
  });
}

export async function startMailerLiteStandIn(options: MailerLiteStandInOptions = {}) {
  const host = options.host ?? '127.0.0.1';
  const apiKey = options.apiKey ?? 'dev-mailerlite-key';
  const now = options.now ?? Date.now;
  const log = options.quiet ? () => {} : (options.log ?? ((line: string) => console.log(line)));
  const { windowMs, requestsPerWindow } = options;
  const limits = parseWith(limitsSchema, { windowMs, requestsPerWindow });

  const store = new Store(options.customFields ?? []);
  const dataFile = options.dataDir && path.join(options.dataDir, 'mailerlite-stand-in.json');
  if (dataFile) await loadAccount(store, dataFile);
  const faults = new MailerLiteFaults();
  // The limit is per account (one API key here).
  const globalLimiter = new FixedWindowLimiter(limits.requestsPerWindow, limits.windowMs);
  const requestLog: RequestLogEntry[] = [];
  let baseUrl = '';

  function rateHeaders(): Record<string, string> {
    return {
      'X-RateLimit-Limit': String(globalLimiter.limit),
      'X-RateLimit-Remaining': String(globalLimiter.remaining(now())),
    };
  }

  async function handleApi(req: IncomingMessage, res: ServerResponse, url: URL, started: number) {
    const method = (req.method ?? 'GET').toUpperCase();
    const done = (status: number, fault?: RequestLogEntry['fault']) => {
      const path = maskEmailsInPath(url.pathname + url.search);
      const durationMs = Date.now() - started;
      const time = new Date(started).toISOString();
      requestLog.push({ time, method, path, status, durationMs, ...(fault && { fault }) });
      if (requestLog.length > REQUEST_LOG_LIMIT) requestLog.shift();
      log(
        `[mailerlite] ${method} ${path} ${status || 'closed'} ${durationMs}ms${fault ? ` (fault: ${fault})` : ''}`,
      );
    };
    const answer = (result: ApiResult, fault?: 'status') => {
      send(res, result);
      done(result.status, fault);
    };

    const dropped = faults.down ? 'down' : faults.takeDrop(url.pathname) ? 'drop' : undefined;
    if (dropped) {
      req.socket.destroy();
      return done(0, dropped);
    }
    let rawBody: Buffer;
    try {
      rawBody = await readBody(req, BODY_LIMIT_BYTES);
    } catch {
      return answer({ status: 413, body: { message: 'Payload Too Large' } });
    }
    if (faults.latencyMs > 0) await sleep(faults.latencyMs);

    const fault = faults.takeFailure(method, url.pathname);
    if (fault) {
      const limited = {
        'Retry-After': '1',
        'X-RateLimit-Limit': String(globalLimiter.limit),
        'X-RateLimit-Remaining': '0',
      };
      const headers = fault.status === 429 ? { ...limited, ...fault.headers } : fault.headers;
      return answer(
        { status: fault.status, body: fault.body ?? defaultFaultBody(fault.status), headers },
        'status',
      );
    }

    const match = matchRoute(method, url.pathname);
    if ('status' in match) return answer(match);
    // The recorded 401 from the real API carries no X-RateLimit headers: unauthenticated requests are not
    // counted against the account. A refused key (faults.refuseKey) is answered the same.
    if (faults.refuseKey || req.headers.authorization !== `Bearer ${apiKey}`) {
      return answer({ status: 401, body: { message: 'Unauthenticated.' } });
    }
    const at = now();
    if (!globalLimiter.tryHit(at)) {
      const headers = { ...rateHeaders(), 'Retry-After': String(globalLimiter.retryAfterSeconds(at)) };
      return answer({ status: 429, body: { message: 'Too Many Attempts.' }, headers });
    }

    let result: ApiResult;
    try {
      const body = parseJsonObject(rawBody);
      result = match.handler({ store, now: at, baseUrl }, match.params, url.searchParams, body);
    } catch (error) {
      console.error('[mailerlite] handler failed:', error);
      result = { status: 500, body: { message: 'Server Error' } };
    }
    answer({ ...result, headers: { ...rateHeaders(), ...result.headers } });
  }

  const snapshot = () => {
    const subscribers = [...store.subscribers.values()];
    return {
      subscribers: subscribers.map((s) => ({
        id: s.id,
        email: s.email,
        status: s.status,
        fields: { ...s.fields },
        groups: [...s.groupIds],
        /** `opted_in_at` as the client sent it ("YYYY-MM-DD HH:MM:SS"), or null. */
        optedInAt: s.optedInAt,
      })),
      groups: [...store.groups.values()].map((g) => ({
        id: g.id,
        name: g.name,
        subscriberCount: subscribers.filter((s) => s.groupIds.includes(g.id)).length,
      })),
      /** Most recent last; bounded to the last 10,000 requests. */
      requests: requestLog.map((e) => ({ ...e })),
      rateLimit: { remaining: globalLimiter.remaining(now()) },
      faults: faults.state(),
    };
  };

  function setLimits(next: unknown): void {
    Object.assign(limits, parseWith(limitsSchema, { ...limits, ...(next as object) }));
    globalLimiter.limit = limits.requestsPerWindow;
    globalLimiter.windowMs = limits.windowMs;
    globalLimiter.reset();
  }

  function reset(): void {
    store.clear();
    requestLog.length = 0;
    globalLimiter.reset();
    faults.clear();
  }

  const control = {
    state: snapshot,
    reset,
    faults,
    more: {
      'PUT limits': (body: unknown) => {
        setLimits(body);
        return limits;
      },
    },
  };

  const server = createServer((req, res) => {
    const started = Date.now();
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const handler = url.pathname.startsWith(CONTROL_PREFIX)
      ? serveControl(req, res, url.pathname, control)
      : handleApi(req, res, url, started);
    handler.catch((error: unknown) => {
      console.error('[mailerlite] request failed:', error);
      if (!res.headersSent) send(res, { status: 500, body: { message: 'Server Error' } });
    });
  });

  const port = await listen(server, options.port ?? 0, host);
  const url = `http://${host}:${port}`;
  baseUrl = `${url}/api`;

  return {
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
    /** Changes limits and starts fresh rate-limit windows. */
    setLimits,
    /** Creates a group directly (no request, no rate limit) and returns its id. */
    addGroup: (name: string) => store.createGroup(name, now()).id,
    reset,
    async stop() {
      await close(server);
      if (dataFile) await saveAccount(store, dataFile);
    },
  };
}

async function loadAccount(store: Store, file: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  if (!existsSync(file)) return;
  const saved = JSON.parse(await readFile(file, 'utf8')) as { subscribers: Subscriber[]; groups: Group[] };
  for (const group of saved.groups) store.groups.set(group.id, group);
  for (const subscriber of saved.subscribers) store.subscribers.set(subscriber.id, subscriber);
}

/** Subscribers and groups only: rate-limit windows do not outlive a restart. */
async function saveAccount(store: Store, file: string): Promise<void> {
  const saved = { subscribers: [...store.subscribers.values()], groups: [...store.groups.values()] };
  await writeFile(`${file}.tmp`, `${JSON.stringify(saved, null, 1)}\n`);
  await rename(`${file}.tmp`, file);
}

function send(res: ServerResponse, { status, body, headers }: ApiResult): void {
  sendJson(res, status, body, {
    'content-type': 'application/json',
    'Cache-Control': 'no-cache, private',
    ...headers,
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
