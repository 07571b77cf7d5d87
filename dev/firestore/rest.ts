import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Engine } from './engine.ts';
import { FirestoreError, invalidArgument, unimplemented } from './errors.ts';
import { fromRestJson, toRestJson } from './protos.ts';

// The Firestore v1 REST API as firebase/firestore/lite calls it: POST {resource}:{method} with a proto3
// JSON body (sent as text/plain to avoid CORS preflights), answered with proto3 JSON; the streaming
// methods answer a JSON array of their responses. Errors are Google's error JSON.

const MAX_BODY_BYTES = 11 * 1024 * 1024;

const ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'x-goog-api-client',
  'x-goog-request-params',
  'x-goog-user-project',
  'x-firebase-gmpid',
  'x-firebase-appcheck',
  'x-firebase-client',
  'google-cloud-resource-prefix',
].join(', ');

/** CORS for the site calling from another origin (browsers), allowing every origin like the emulator. */
export function corsHeaders(req: IncomingMessage): Record<string, string> {
  const origin = req.headers.origin;
  return origin
    ? { 'access-control-allow-origin': origin, vary: 'Origin', 'access-control-allow-credentials': 'true' }
    : { 'access-control-allow-origin': '*' };
}

export function answerPreflight(req: IncomingMessage, res: ServerResponse): void {
  const requested = req.headers['access-control-request-headers'];
  const headers: Record<string, string> = {
    ...corsHeaders(req),
    'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
    'access-control-allow-headers': requested ? `${ALLOWED_HEADERS}, ${requested}` : ALLOWED_HEADERS,
    'access-control-max-age': '86400',
  };
  // Chrome's Private Network Access asks before a public page may call a loopback server.
  if (req.headers['access-control-request-private-network'] === 'true') {
    headers['access-control-allow-private-network'] = 'true';
  }
  res.writeHead(204, headers).end();
}

export function sendJson(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  // JSON has no negative zero; proto3 JSON lets a double be a string, and the SDKs read "-0" back as -0.
  const text = JSON.stringify(body, (_key, value) => (Object.is(value, -0) ? '-0' : value));
  res.writeHead(status, {
    ...corsHeaders(req),
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export function sendError(req: IncomingMessage, res: ServerResponse, error: FirestoreError): void {
  sendJson(req, res, error.httpStatus, {
    error: { code: error.httpStatus, message: error.message, status: error.status },
  });
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw invalidArgument('Request payload size exceeds the limit.');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function parseJson(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw invalidArgument('Invalid JSON payload received. The body is not JSON.');
  }
}

interface Route {
  request: string;
  response: string;
  /** The request field the URL's resource fills. */
  bind: 'database' | 'parent';
  streaming: boolean;
  call: (engine: Engine, request: never) => unknown;
}

const ROUTES: Record<string, Route> = {
  batchGet: {
    request: 'BatchGetDocumentsRequest',
    response: 'BatchGetDocumentsResponse',
    bind: 'database',
    streaming: true,
    call: (e, r) => e.batchGetDocuments(r),
  },
  commit: {
    request: 'CommitRequest',
    response: 'CommitResponse',
    bind: 'database',
    streaming: false,
    call: (e, r) => e.commit(r),
  },
  beginTransaction: {
    request: 'BeginTransactionRequest',
    response: 'BeginTransactionResponse',
    bind: 'database',
    streaming: false,
    call: (e, r) => e.beginTransaction(r),
  },
  rollback: {
    request: 'RollbackRequest',
    response: 'Empty',
    bind: 'database',
    streaming: false,
    call: (e, r) => e.rollback(r),
  },
  batchWrite: {
    request: 'BatchWriteRequest',
    response: 'BatchWriteResponse',
    bind: 'database',
    streaming: false,
    call: (e, r) => e.batchWrite(r),
  },
  runQuery: {
    request: 'RunQueryRequest',
    response: 'RunQueryResponse',
    bind: 'parent',
    streaming: true,
    call: (e, r) => e.runQuery(r),
  },
  runAggregationQuery: {
    request: 'RunAggregationQueryRequest',
    response: 'RunAggregationQueryResponse',
    bind: 'parent',
    streaming: true,
    call: (e, r) => e.runAggregationQuery(r),
  },
  listCollectionIds: {
    request: 'ListCollectionIdsRequest',
    response: 'ListCollectionIdsResponse',
    bind: 'parent',
    streaming: false,
    call: (e, r) => e.listCollectionIds(r),
  },
};

/** Splits `/v1/{resource}:{method}` into the decoded resource name and the method. */
function parseRpcPath(pathname: string): { resource: string; method?: string } {
  const raw = pathname.slice('/v1/'.length);
  const lastSlash = raw.lastIndexOf('/');
  const colon = raw.indexOf(':', lastSlash + 1);
  const resourceRaw = colon === -1 ? raw : raw.slice(0, colon);
  const method = colon === -1 ? undefined : raw.slice(colon + 1);
  const segments = resourceRaw.split('/').map((s) => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(s);
    } catch {
      throw invalidArgument(`Invalid resource path "${pathname}".`);
    }
    if (decoded.includes('/')) throw invalidArgument(`Invalid resource path "${pathname}".`);
    return decoded;
  });
  return { resource: segments.join('/'), method };
}

/** Answers one REST request under /v1/. */
export async function handleRest(
  engine: Engine,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
) {
  try {
    const { resource, method } = parseRpcPath(pathname);
    const route = method === undefined ? undefined : ROUTES[method];
    if (req.method !== 'POST' || !route) {
      const what = method
        ? `the REST method :${method}`
        : `REST ${req.method} on a resource (GetDocument, ListDocuments, ...)`;
      throw unimplemented(
        `${what}; the stand-in serves POST :batchGet, :commit, :runQuery, :runAggregationQuery, :beginTransaction, :rollback, :batchWrite, :listCollectionIds`,
      );
    }
    let bound = resource;
    if (route.bind === 'database') {
      if (!resource.endsWith('/documents'))
        throw invalidArgument(`:${method} is called on {database}/documents.`);
      bound = resource.slice(0, -'/documents'.length);
    }
    const body = parseJson(await readBody(req));
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw invalidArgument('Invalid JSON payload received. Expected an object.');
    }
    const inBody = (body as Record<string, unknown>)[route.bind];
    if (inBody !== undefined && inBody !== bound) {
      throw invalidArgument(`The ${route.bind} in the body does not match the URL.`);
    }
    const request = fromRestJson<Record<string, unknown>>(route.request, { ...body, [route.bind]: bound });
    const result = route.call(engine, request as never);
    const json = route.streaming
      ? (result as object[]).map((r) => toRestJson(route.response, r))
      : route.response === 'Empty'
        ? {}
        : toRestJson(route.response, result as object);
    sendJson(req, res, 200, json);
  } catch (error) {
    if (error instanceof FirestoreError) {
      sendError(req, res, error);
      return;
    }
    throw error;
  }
}
