import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, readBody, sendJson } from '../http.ts';
import type { Engine } from './engine.ts';
import { type FirestoreError, invalidArgument, unimplemented } from './errors.ts';
import { fromRestJson, toRestJson } from './protos.ts';

// The Firestore v1 REST API as firebase/firestore/lite calls it: POST {database}/documents:{method} with a
// proto3 JSON body (sent as text/plain to avoid CORS preflights), answered with proto3 JSON; the streaming
// methods answer a JSON array of their responses. Errors are Google's error JSON.

/** CORS for the site calling from another origin (browsers), allowing every origin like the emulator. */
export function corsHeaders(req: IncomingMessage): Record<string, string> {
  const origin = req.headers.origin;
  return origin
    ? { 'access-control-allow-origin': origin, vary: 'Origin', 'access-control-allow-credentials': 'true' }
    : { 'access-control-allow-origin': '*' };
}

/** Allows whatever the browser asks to send (the SDK's x-goog-* and x-firebase-* headers), as the emulator does. */
export function answerPreflight(req: IncomingMessage, res: ServerResponse): void {
  const headers: Record<string, string> = {
    ...corsHeaders(req),
    'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
    'access-control-allow-headers': req.headers['access-control-request-headers'] ?? 'content-type',
    'access-control-max-age': '86400',
  };
  // Chrome's Private Network Access asks before a public page may call a loopback server.
  if (req.headers['access-control-request-private-network'] === 'true') {
    headers['access-control-allow-private-network'] = 'true';
  }
  res.writeHead(204, headers).end();
}

export function sendError(req: IncomingMessage, res: ServerResponse, error: FirestoreError): void {
  const { httpStatus: code, message, status } = error;
  sendJson(res, code, { error: { code, message, status } }, corsHeaders(req));
}

/** A JSON object body, at most Cloud Firestore's 10 MiB request size (and a little). */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = (await readBody(req, 11 * 1024 * 1024)).toString('utf8');
  } catch (error) {
    if (error instanceof HttpError) throw invalidArgument('Request payload size exceeds the limit.');
    throw error;
  }
  let body: unknown = {};
  try {
    if (text.trim() !== '') body = JSON.parse(text);
  } catch {
    throw invalidArgument('Invalid JSON payload received. The body is not JSON.');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidArgument('Invalid JSON payload received. Expected an object.');
  }
  return body as Record<string, unknown>;
}

type Call = (engine: Engine, request: never) => unknown;

/** Method -> [request type, response type, streaming, call]; every method binds `database`, but queries `parent`. */
const ROUTES: Record<string, [string, string, boolean, Call]> = {
  batchGet: ['BatchGetDocumentsRequest', 'BatchGetDocumentsResponse', true, (e, r) => e.batchGetDocuments(r)],
  commit: ['CommitRequest', 'CommitResponse', false, (e, r) => e.commit(r)],
  beginTransaction: [
    'BeginTransactionRequest',
    'BeginTransactionResponse',
    false,
    (e, r) => e.beginTransaction(r),
  ],
  rollback: ['RollbackRequest', 'Empty', false, (e, r) => e.rollback(r)],
  runQuery: ['RunQueryRequest', 'RunQueryResponse', true, (e, r) => e.runQuery(r)],
  runAggregationQuery: [
    'RunAggregationQueryRequest',
    'RunAggregationQueryResponse',
    true,
    (e, r) => e.runAggregationQuery(r),
  ],
};

/** Answers one REST request under /v1/: `{resource}:{method}`. */
export async function handleRest(engine: Engine, req: IncomingMessage, res: ServerResponse, url: URL) {
  const raw = url.pathname
    .slice('/v1/'.length)
    .split('/')
    .map((segment) => {
      try {
        const decoded = decodeURIComponent(segment);
        if (!decoded.includes('/')) return decoded;
      } catch {}
      throw invalidArgument(`Invalid resource path "${url.pathname}".`);
    })
    .join('/');
  const colon = raw.indexOf(':', raw.lastIndexOf('/') + 1);
  if (colon === -1) throw unimplemented(`the REST document methods (${req.method} on a resource)`);
  const resource = raw.slice(0, colon);
  const method = raw.slice(colon + 1);
  const route = ROUTES[method];
  if (!route) throw unimplemented(`the REST method :${method}`);
  if (req.method !== 'POST') throw unimplemented(`REST ${req.method} for :${method} (it is a POST method)`);
  const [requestType, responseType, streaming, call] = route;
  const bind = method.startsWith('run') ? 'parent' : 'database';
  let bound = resource;
  if (bind === 'database') {
    if (!resource.endsWith('/documents'))
      throw invalidArgument(`:${method} is called on {database}/documents.`);
    bound = resource.slice(0, -'/documents'.length);
  }
  const body = await readJsonObject(req);
  if (body[bind] !== undefined && body[bind] !== bound) {
    throw invalidArgument(`The ${bind} in the body does not match the URL.`);
  }
  const result = call(engine, fromRestJson<never>(requestType, { ...body, [bind]: bound }));
  const json = streaming
    ? (result as object[]).map((r) => toRestJson(responseType, r))
    : responseType === 'Empty'
      ? {}
      : toRestJson(responseType, result as object);
  sendJson(res, 200, json, corsHeaders(req));
}
