import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import { parseWith, take } from '../http.ts';

const count = z.number().int().min(1).default(1);

const failRule = z.strictObject({
  count,
  status: z.number().int().min(100).max(599),
  body: z.unknown().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  /** Only requests whose path (e.g. "/api/subscribers") starts with this. */
  pathPrefix: z.string().optional(),
  /** Only requests with this HTTP method. */
  method: z.string().optional(),
});

const dropRule = z.strictObject({ count, pathPrefix: z.string().optional() });

/** The body of PUT /__control/faults: rules are added, latencyMs, down and refuseKey replace the current values. */
const faultsBody = z.strictObject({
  failNext: z.union([failRule, z.array(failRule)]).optional(),
  /** A number N is `{ count: N }`. */
  dropNext: z.preprocess((n) => (typeof n === 'number' ? { count: n } : n), dropRule).optional(),
  latencyMs: z.number().min(0).optional(),
  down: z.boolean().optional(),
  refuseKey: z.boolean().optional(),
});

/** Answer the next `count` matching requests with `status` (and `body`) instead of handling them. */
export type FailRule = z.infer<typeof failRule>;
/** Close the connection of the next `count` matching requests without answering. */
export type DropRule = z.infer<typeof dropRule>;

/** Laravel's message for the status: its own for 429 and 500, else the status's reason phrase. */
export function defaultFaultBody(status: number): { message: string } {
  const laravel: Record<number, string> = { 429: 'Too Many Attempts', 500: 'Server Error' };
  return { message: `${laravel[status] ?? STATUS_CODES[status] ?? 'Error'}.` };
}

export class MailerLiteFaults {
  private failRules: FailRule[] = [];
  private dropRules: DropRule[] = [];
  /** Added before every API answer (not /__control/), to exercise client timeouts. */
  latencyMs = 0;
  /** While true every API request has its connection closed unanswered, as when the service is unreachable. */
  down = false;
  /** While true every API request, the right key's included, is answered 401 as a revoked token is. */
  refuseKey = false;

  failNext(count: number, status: number, body?: unknown, options: Partial<FailRule> = {}): void {
    this.apply({ failNext: { ...options, count, status, body } });
  }

  dropNext(count: number, options: Partial<DropRule> = {}): void {
    this.apply({ dropNext: { ...options, count } });
  }

  clear(): void {
    this.failRules = [];
    this.dropRules = [];
    this.latencyMs = 0;
    this.down = false;
    this.refuseKey = false;
  }

  takeFailure(method: string, path: string): FailRule | undefined {
    return take(
      this.failRules,
      (r) =>
        (r.pathPrefix === undefined || path.startsWith(r.pathPrefix)) &&
        (r.method === undefined || r.method.toUpperCase() === method.toUpperCase()),
    );
  }

  takeDrop(path: string): boolean {
    return (
      take(this.dropRules, (r) => r.pathPrefix === undefined || path.startsWith(r.pathPrefix)) !== undefined
    );
  }

  state() {
    return {
      failNext: this.failRules.map((r) => ({ ...r })),
      dropNext: this.dropRules.map((r) => ({ ...r })),
      latencyMs: this.latencyMs,
      down: this.down,
      refuseKey: this.refuseKey,
    };
  }

  /** Applies the JSON of PUT /__control/faults; a malformed body throws and changes nothing. */
  apply(json: unknown): void {
    const { failNext, dropNext, latencyMs, down, refuseKey } = parseWith(faultsBody, json);
    this.failRules.push(...[failNext ?? []].flat());
    if (dropNext) this.dropRules.push(dropNext);
    if (latencyMs !== undefined) this.latencyMs = latencyMs;
    if (down !== undefined) this.down = down;
    if (refuseKey !== undefined) this.refuseKey = refuseKey;
  }
}
