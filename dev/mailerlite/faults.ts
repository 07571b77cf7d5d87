import { STATUS_CODES } from 'node:http';
import { isPlainObject } from './validation.ts';

/** Answer the next `count` matching requests with `status` (and `body`) instead of handling them. */
export interface FailRule {
  count: number;
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Only requests whose path (e.g. "/api/batch", "/api/subscribers") starts with this. */
  pathPrefix?: string;
  /** Only requests with this HTTP method. */
  method?: string;
  /**
   * false (default): the rule matches HTTP requests as they arrive. true: it matches the requests inside a
   * POST /api/batch instead, so one entry of a batch can be made to fail while the batch answers 200.
   */
  batched?: boolean;
}

/** Close the connection of the next `count` matching requests without answering. */
export interface DropRule {
  count: number;
  pathPrefix?: string;
}

export interface FaultsSnapshot {
  failNext: FailRule[];
  dropNext: DropRule[];
  latencyMs: number;
  down: boolean;
}

const DEFAULT_MESSAGES: Record<number, string> = {
  408: 'Request Timeout.',
  429: 'Too Many Attempts.',
  500: 'Server Error.',
  502: 'Bad Gateway.',
  503: 'Service Unavailable.',
  504: 'Gateway Timeout.',
};

export function defaultFaultBody(status: number): { message: string } {
  return { message: DEFAULT_MESSAGES[status] ?? `${STATUS_CODES[status] ?? 'Error'}.` };
}

export class MailerLiteFaults {
  private failRules: FailRule[] = [];
  private dropRules: DropRule[] = [];
  /** Added before every API answer (not /__control/), to exercise client timeouts. */
  latencyMs = 0;
  /** While true every API request has its connection closed unanswered, as when the service is unreachable. */
  down = false;

  failNext(
    count: number,
    status: number,
    body?: unknown,
    options: Omit<FailRule, 'count' | 'status' | 'body'> = {},
  ): void {
    if (!Number.isInteger(count) || count < 1)
      throw new TypeError('failNext count must be a positive integer');
    if (!Number.isInteger(status) || status < 100 || status > 599) {
      throw new TypeError('failNext status must be an HTTP status code');
    }
    this.failRules.push({ count, status, body, ...options });
  }

  dropNext(count: number, options: Omit<DropRule, 'count'> = {}): void {
    if (!Number.isInteger(count) || count < 1)
      throw new TypeError('dropNext count must be a positive integer');
    this.dropRules.push({ count, ...options });
  }

  clear(): void {
    this.failRules = [];
    this.dropRules = [];
    this.latencyMs = 0;
    this.down = false;
  }

  /** Consumes one use of the first failure rule matching this request, if any. */
  takeFailure(method: string, path: string, batched: boolean): FailRule | undefined {
    const rule = this.failRules.find(
      (r) =>
        (r.batched ?? false) === batched &&
        (r.pathPrefix === undefined || path.startsWith(r.pathPrefix)) &&
        (r.method === undefined || r.method.toUpperCase() === method.toUpperCase()),
    );
    if (!rule) return undefined;
    rule.count -= 1;
    if (rule.count === 0) this.failRules.splice(this.failRules.indexOf(rule), 1);
    return rule;
  }

  takeDrop(path: string): boolean {
    const rule = this.dropRules.find((r) => r.pathPrefix === undefined || path.startsWith(r.pathPrefix));
    if (!rule) return false;
    rule.count -= 1;
    if (rule.count === 0) this.dropRules.splice(this.dropRules.indexOf(rule), 1);
    return true;
  }

  snapshot(): FaultsSnapshot {
    return {
      failNext: this.failRules.map((r) => ({ ...r })),
      dropNext: this.dropRules.map((r) => ({ ...r })),
      latencyMs: this.latencyMs,
      down: this.down,
    };
  }

  /**
   * Applies the JSON of PUT /__control/faults: `failNext` (a rule or a list) and `dropNext` (a count or a
   * rule) add rules; `latencyMs` and `down` replace the current values. Throws TypeError on a malformed body.
   */
  applyJson(json: unknown): void {
    if (!isPlainObject(json)) throw new TypeError('faults body must be a JSON object');
    const { failNext, dropNext, latencyMs, down } = json;
    const failRules = failNext === undefined ? [] : Array.isArray(failNext) ? failNext : [failNext];
    const dropRules =
      dropNext === undefined ? [] : typeof dropNext === 'number' ? [{ count: dropNext }] : [dropNext];
    if (latencyMs !== undefined && (typeof latencyMs !== 'number' || latencyMs < 0)) {
      throw new TypeError('latencyMs must be a non-negative number');
    }
    if (down !== undefined && typeof down !== 'boolean') throw new TypeError('down must be a boolean');
    // Validate everything before changing anything, so a bad body leaves the faults as they were.
    const parsedFail = failRules.map(parseFailRule);
    const parsedDrop = dropRules.map(parseDropRule);
    for (const rule of parsedFail) this.failNext(rule.count, rule.status, rule.body, rule);
    for (const rule of parsedDrop) this.dropNext(rule.count, rule);
    if (latencyMs !== undefined) this.latencyMs = latencyMs;
    if (down !== undefined) this.down = down;
  }
}

function parseFailRule(value: unknown): FailRule {
  if (!isPlainObject(value)) throw new TypeError('failNext must be an object or a list of objects');
  const { count = 1, status, body, headers, pathPrefix, method, batched } = value;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) {
    throw new TypeError('failNext.count must be a positive integer');
  }
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
    throw new TypeError('failNext.status must be an HTTP status code');
  }
  if (headers !== undefined && !isStringRecord(headers)) {
    throw new TypeError('failNext.headers must map names to strings');
  }
  if (pathPrefix !== undefined && typeof pathPrefix !== 'string') {
    throw new TypeError('failNext.pathPrefix must be a string');
  }
  if (method !== undefined && typeof method !== 'string')
    throw new TypeError('failNext.method must be a string');
  if (batched !== undefined && typeof batched !== 'boolean') {
    throw new TypeError('failNext.batched must be a boolean');
  }
  const rule: FailRule = { count, status };
  if (body !== undefined) rule.body = body;
  if (headers !== undefined) rule.headers = headers;
  if (pathPrefix !== undefined) rule.pathPrefix = pathPrefix;
  if (method !== undefined) rule.method = method;
  if (batched !== undefined) rule.batched = batched;
  return rule;
}

function parseDropRule(value: unknown): DropRule {
  if (!isPlainObject(value)) throw new TypeError('dropNext must be a count or an object');
  const { count = 1, pathPrefix } = value;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) {
    throw new TypeError('dropNext.count must be a positive integer');
  }
  if (pathPrefix !== undefined && typeof pathPrefix !== 'string') {
    throw new TypeError('dropNext.pathPrefix must be a string');
  }
  return pathPrefix === undefined ? { count } : { count, pathPrefix };
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return isPlainObject(value) && Object.values(value).every((v) => typeof v === 'string');
}
