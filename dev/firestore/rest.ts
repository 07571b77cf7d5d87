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

const IGNORED_PARAMS = new Set(['key', 'alt', '$alt', 'prettyPrint', '$prettyPrint']);

/**
 * The query parameters a document method takes (google.api.http binding of the non-body fields), as a
 * proto3 JSON object: `mask.fieldPaths=a&mask.fieldPaths=b`, `currentDocument.exists=true`, ...
 */
function queryParams(url: URL, allowed: Record<string, 'string' | 'strings' | 'boolean' | 'number'>) {
  const out: Record<string, unknown> = {};
  for (const key of new Set(url.searchParams.keys())) {
    if (IGNORED_PARAMS.has(key)) continue;
    const kind = allowed[key];
    if (!kind)
      throw invalidArgument(
        `Invalid JSON payload received. Unknown name "${key}": Cannot bind query parameter.`,
      );
    const values = url.searchParams.getAll(key);
    const value =
      kind === 'strings'
        ? values
        : kind === 'boolean'
          ? values[0] === 'true'
          : kind === 'number'
            ? Number(values[0])
            : values[0];
    const parts = key.split('.');
    let target = out;
    for (const part of parts.slice(0, -1)) {
      target[part] ??= {};
      target = target[part] as Record<string, unknown>;
    }
    target[parts.at(-1) as string] = value;
  }
  return out;
}

const READ_PARAMS = { 'mask.fieldPaths': 'strings', transaction: 'string', readTime: 'string' } as const;
const PRECONDITION_PARAMS = {
  'currentDocument.exists': 'boolean',
  'currentDocument.updateTime': 'string',
} as const;

async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const body = parseJson(await readBody(req));
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidArgument('Invalid JSON payload received. Expected an object.');
  }
  return body as Record<string, unknown>;
}

/** GetDocument, ListDocuments, CreateDocument, UpdateDocument, DeleteDocument on resource URLs. */
async function documentMethod(
  engine: Engine,
  req: IncomingMessage,
  url: URL,
  resource: string,
): Promise<unknown> {
  const m = /^(projects\/[^/]+\/databases\/[^/]+\/documents)\/(.+)$/.exec(resource);
  if (!m) throw new FirestoreError('NOT_FOUND', `No REST resource ${resource}.`);
  const segments = (m[2] as string).split('/');
  const isDocument = segments.length % 2 === 0;
  const parent = [m[1], ...segments.slice(0, -1)].join('/');
  const collectionId = segments.at(-1) as string;
  switch (`${req.method} ${isDocument ? 'document' : 'collection'}`) {
    case 'GET document': {
      const request = fromRestJson<never>('GetDocumentRequest', {
        name: resource,
        ...queryParams(url, READ_PARAMS),
      });
      return toRestJson('Document', engine.getDocument(request));
    }
    case 'GET collection': {
      const params = queryParams(url, {
        ...READ_PARAMS,
        pageSize: 'number',
        pageToken: 'string',
        orderBy: 'string',
        showMissing: 'boolean',
      });
      const request = fromRestJson<never>('ListDocumentsRequest', { parent, collectionId, ...params });
      return toRestJson('ListDocumentsResponse', engine.listDocuments(request));
    }
    case 'POST collection': {
      const params = queryParams(url, { documentId: 'string', 'mask.fieldPaths': 'strings' });
      const request = fromRestJson<never>('CreateDocumentRequest', {
        parent,
        collectionId,
        ...params,
        document: await jsonBody(req),
      });
      return toRestJson('Document', engine.createDocument(request));
    }
    case 'PATCH document': {
      const params = queryParams(url, {
        'updateMask.fieldPaths': 'strings',
        'mask.fieldPaths': 'strings',
        ...PRECONDITION_PARAMS,
      });
      const document = { ...(await jsonBody(req)), name: resource };
      const request = fromRestJson<never>('UpdateDocumentRequest', { ...params, document });
      return toRestJson('Document', engine.updateDocument(request));
    }
    case 'DELETE document': {
      const params = queryParams(url, PRECONDITION_PARAMS);
      engine.deleteDocument(fromRestJson<never>('DeleteDocumentRequest', { name: resource, ...params }));
      return {};
    }
    default:
      throw unimplemented(`REST ${req.method} on a ${isDocument ? 'document' : 'collection'}`);
  }
}

/** Answers one REST request under /v1/. */
export async function handleRest(engine: Engine, req: IncomingMessage, res: ServerResponse, url: URL) {
  try {
    const { resource, method } = parseRpcPath(url.pathname);
    if (method === undefined) {
      sendJson(req, res, 200, await documentMethod(engine, req, url, resource));
      return;
    }
    const route = ROUTES[method];
    if (!route) throw unimplemented(`the REST method :${method}`);
    if (req.method !== 'POST') throw unimplemented(`REST ${req.method} for :${method} (it is a POST method)`);
    let bound = resource;
    if (route.bind === 'database') {
      if (!resource.endsWith('/documents'))
        throw invalidArgument(`:${method} is called on {database}/documents.`);
      bound = resource.slice(0, -'/documents'.length);
    }
    const body = await jsonBody(req);
    if (body[route.bind] !== undefined && body[route.bind] !== bound) {
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
