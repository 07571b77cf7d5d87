// The stand-ins' one HTTP toolkit: bodies in, JSON out, listening and closing, and the control surface
// every stand-in serves alike: GET /__control/state, POST /__control/reset, GET|PUT|DELETE /__control/faults.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Server } from 'node:net';
import { type ZodType, z } from 'zod';

export const CONTROL_PREFIX = '/__control/';

/** A request the stand-in cannot take: answered with this status and the message. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The whole body. Past `limit` it rejects with 413, yet keeps draining so the answer can still be sent. */
export function readBody(req: IncomingMessage, limit = 1024 * 1024): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) reject(new HttpError(413, `The request body is larger than ${limit} bytes.`));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A control body checked against its schema: a 400 naming every problem, before anything changes. */
export function parseWith<T>(schema: ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (!result.success) throw new HttpError(400, z.prettifyError(result.error));
  return result.data;
}

/** The body as JSON; an empty body is `{}`. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = (await readBody(req)).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'The body is not JSON.');
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (status === 204) return void res.writeHead(204, headers).end();
  const text = JSON.stringify(body);
  res
    .writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(text)),
      ...headers,
    })
    .end(text);
}

/** Listens on host:port (0: any free port) and resolves with the port bound. */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops listening and ends every open connection, so a stop never waits on a client's keep-alive. */
export function close(server: Server & { closeAllConnections?: () => void }): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });
}

interface ControlSurface {
  /** What the stand-in holds now. */
  state(): unknown;
  /** Forgets every piece of data and the faults. */
  reset(): unknown;
  /** `apply` validates the whole body before changing anything, and throws on a malformed one. */
  faults: { state(): unknown; apply(body: unknown): unknown; clear(): unknown };
  /** Further routes, keyed `METHOD name` for `/__control/name`, answered 200 with what they return. */
  more?: Record<string, (body: unknown) => unknown>;
}

/** Consumes one use of the first fault rule matching, if any. */
export function take<T extends { count: number }>(rules: T[], matches: (rule: T) => boolean): T | undefined {
  const rule = rules.find(matches);
  if (rule && --rule.count === 0) rules.splice(rules.indexOf(rule), 1);
  return rule;
}

/** Answers a request under /__control/. A malformed body is a 400 that changes nothing. */
export async function serveControl(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  surface: ControlSurface,
): Promise<void> {
  const route = `${req.method ?? 'GET'} ${pathname.slice(CONTROL_PREFIX.length)}`;
  try {
    switch (route) {
      case 'GET state':
        return sendJson(res, 200, await surface.state());
      case 'POST reset':
        await surface.reset();
        return sendJson(res, 204, null);
      case 'GET faults':
        return sendJson(res, 200, surface.faults.state());
      case 'PUT faults':
        await surface.faults.apply(await readJson(req));
        return sendJson(res, 200, surface.faults.state());
      case 'DELETE faults':
        await surface.faults.clear();
        return sendJson(res, 200, surface.faults.state());
    }
    const more = surface.more?.[route];
    if (more) return sendJson(res, 200, await more(req.method === 'GET' ? undefined : await readJson(req)));
    sendJson(res, 404, { message: `No control route ${req.method} ${pathname}.` });
  } catch (error) {
    const status = error instanceof HttpError ? error.status : 400;
    sendJson(res, status, { message: error instanceof Error ? error.message : String(error) });
  }
}
