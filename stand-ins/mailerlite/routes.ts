// The MailerLite API endpoints the stand-in serves, as documented at developers.mailerlite.com (Subscribers,
// Groups, Fields) and as recorded in mailerlite/mailerlite-python's VCR cassettes. Handlers are plain
// functions of (context, params, query, body).

import { isValidEmail, type Store, SUBSCRIBER_STATUSES, type SubscriberStatus } from './store.ts';
import { isPlainObject, Validator, validationBody } from './validation.ts';

export interface ApiResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface ApiContext {
  store: Store;
  now: number;
  /** e.g. "http://127.0.0.1:3080/api", used to build links the way MailerLite builds absolute URLs. */
  baseUrl: string;
}

type Handler = (
  ctx: ApiContext,
  params: Record<string, string>,
  query: URLSearchParams,
  body: Record<string, unknown>,
) => ApiResult;

interface Route {
  method: string;
  pattern: RegExp;
  names: string[];
  handler: Handler;
}

export type RouteMatch =
  | { kind: 'found'; handler: Handler; params: Record<string, string> }
  | { kind: 'not-found' }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-implemented' };

function compile(path: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const pattern = new RegExp(
    `^${path.replace(/\{(\w+)\}/g, (_, name: string) => {
      names.push(name);
      return '([^/]+)';
    })}$`,
  );
  return { pattern, names };
}

function route(method: string, path: string, handler: Handler): Route {
  return { method, handler, ...compile(path) };
}

function notFound(model: string): ApiResult {
  return { status: 404, body: { message: `No query results for model [App\\Models\\${model}].` } };
}

function invalid(v: Validator): ApiResult {
  return { status: 422, body: validationBody(v.errors) };
}

function groupIdOf(value: unknown): string | undefined {
  if (typeof value === 'string' && /^\d+$/.test(value)) return value;
  // A JSON number only survives if it is below 2^53; larger ids arrive rounded and match nothing, as they
  // would at MailerLite.
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

// POST /api/subscribers: "Create/upsert subscriber". Creates (201) or updates (200) by email; it is
// non-destructive, so fields and groups left out are kept and the groups given are added to the existing ones.
const upsertSubscriber: Handler = (ctx, _params, _query, body) => {
  const v = new Validator();
  const { email, fields, groups, status, ip_address: ipAddress } = body;
  if (email === undefined || email === null || email === '') v.required('email');
  else if (typeof email !== 'string' || !isValidEmail(email)) v.invalidEmail('email');
  if (fields !== undefined && fields !== null && !isPlainObject(fields)) v.notArray('fields');
  const groupIds: string[] = [];
  if (groups !== undefined && groups !== null) {
    if (!Array.isArray(groups)) v.notArray('groups');
    else
      groups.forEach((value, index) => {
        const id = groupIdOf(value);
        if (id === undefined || !ctx.store.groups.has(id)) v.invalidSelection(`groups.${index}`);
        else groupIds.push(id);
      });
  }
  if (status !== undefined && !SUBSCRIBER_STATUSES.includes(status as SubscriberStatus)) {
    v.invalidSelection('status');
  }
  if (ipAddress !== undefined && ipAddress !== null && typeof ipAddress !== 'string')
    v.notString('ip_address');
  // Laravel's date_format:Y-m-d H:i:s, as the docs give opted_in_at ("2021-08-31 14:22:08").
  const optedInAt = body.opted_in_at;
  if (optedInAt !== undefined && optedInAt !== null && !isMailerLiteTime(optedInAt)) {
    v.add('opted_in_at', 'The opted in at does not match the format Y-m-d H:i:s.');
  }
  if (v.failed) return invalid(v);

  const existing = ctx.store.findSubscriber(email as string);
  const subscriber = existing ?? ctx.store.createSubscriber(email as string, ctx.now, 'api');
  if (isPlainObject(fields)) ctx.store.mergeFields(subscriber, fields);
  for (const id of groupIds) ctx.store.addToGroup(subscriber, id);
  if (typeof status === 'string' && status !== subscriber.status) {
    subscriber.status = status as SubscriberStatus;
    if (status === 'unsubscribed') subscriber.unsubscribedAt = ctx.now;
    if (status === 'active') {
      subscriber.unsubscribedAt = null;
      subscriber.subscribedAt = ctx.now;
    }
  }
  if (typeof ipAddress === 'string') subscriber.ipAddress = ipAddress;
  if (typeof body.opted_in_at === 'string') subscriber.optedInAt = body.opted_in_at;
  if (typeof body.optin_ip === 'string') subscriber.optinIp = body.optin_ip;
  subscriber.updatedAt = ctx.now;
  return { status: existing ? 200 : 201, body: { data: ctx.store.subscriberJson(subscriber) } };
};

// GET /api/subscribers/{id or email}
const getSubscriber: Handler = (ctx, params) => {
  const subscriber = ctx.store.findSubscriber(params.subscriber ?? '');
  if (!subscriber) return notFound('Subscriber\\Subscriber');
  return { status: 200, body: { data: ctx.store.subscriberJson(subscriber) } };
};

// POST /api/subscribers/{id}/forget: the GDPR erasure. The subscriber leaves every group and can no
// longer be found at once; MailerLite says its data goes "within 30 days". An unknown id is a 404.
const forgetSubscriber: Handler = (ctx, params) => {
  const subscriber = ctx.store.subscribers.get(params.subscriber ?? '');
  if (!subscriber) return notFound('Subscriber\\Subscriber');
  const data = ctx.store.subscriberJson(subscriber);
  ctx.store.deleteSubscriber(subscriber);
  return {
    status: 200,
    body: { data, message: 'Subscriber data will be completely deleted and forgotten within 30 days.' },
  };
};

function isMailerLiteTime(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const match = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(value);
  if (!match) return false;
  const date = new Date(`${value.replace(' ', 'T')}Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 19).replace('T', ' ') === value;
}

/** A listing's `limit` (default 100) and `page` (from 1), or the 422 MailerLite answers to either not a whole number. */
function pagingOf(query: URLSearchParams) {
  const v = new Validator();
  const limit = positiveInt(query.get('limit'), 100);
  const page = positiveInt(query.get('page'), 1);
  if (limit === undefined) v.add('limit', 'The limit must be an integer.');
  if (page === undefined) v.add('page', 'The page must be an integer.');
  if (v.failed || limit === undefined || page === undefined) return invalid(v);
  return { limit, page };
}

/**
 * One page of `items` in MailerLite's paging envelope (`data`, `links`, `meta`, of which the client reads
 * `meta.last_page`), for the listing at `path`.
 */
function pageOf<T>(items: T[], page: number, limit: number, path: string) {
  const total = items.length;
  const lastPage = Math.max(1, Math.ceil(total / limit));
  const start = (page - 1) * limit;
  const data = items.slice(start, start + limit);
  const pageUrl = (n: number) => (n >= 1 && n <= lastPage ? `${path}?page=${n}` : null);
  return {
    data,
    links: { first: pageUrl(1), last: pageUrl(lastPage), prev: pageUrl(page - 1), next: pageUrl(page + 1) },
    meta: {
      current_page: page,
      from: data.length > 0 ? start + 1 : null,
      last_page: lastPage,
      path,
      per_page: limit,
      to: data.length > 0 ? start + data.length : null,
      total,
    },
  };
}

// GET /api/groups: limit, page (from 1), filter[name] (partial match, case-insensitive). The answer keeps
// MailerLite's paging envelope (`links`, `meta`), of which the client reads `meta.last_page`.
const listGroups: Handler = (ctx, _params, query) => {
  const paging = pagingOf(query);
  if ('status' in paging) return paging;
  const { limit, page } = paging;

  const nameFilter = query.get('filter[name]')?.toLowerCase();
  const groups = [...ctx.store.groups.values()].filter(
    (g) => !nameFilter || g.name.toLowerCase().includes(nameFilter),
  );
  const listed = pageOf(groups, page, limit, `${ctx.baseUrl}/groups`);
  return { status: 200, body: { ...listed, data: listed.data.map((g) => ctx.store.groupJson(g)) } };
};

function positiveInt(raw: string | null, fallback: number): number | undefined {
  if (raw === null || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) return undefined;
  return Number(raw);
}

function validateGroupName(v: Validator, name: unknown): void {
  if (name === undefined || name === null || name === '') v.required('name');
  else if (typeof name !== 'string') v.notString('name');
  else if (name.length > 255) v.tooLong('name', 255);
}

// POST /api/groups: {name} (at most 255 characters) -> 201 with the group.
const createGroup: Handler = (ctx, _params, _query, body) => {
  const v = new Validator();
  validateGroupName(v, body.name);
  if (v.failed) return invalid(v);
  const group = ctx.store.createGroup(body.name as string, ctx.now);
  return { status: 201, body: { data: ctx.store.groupJson(group) } };
};

// DELETE /api/groups/{group_id}
const deleteGroup: Handler = (ctx, params) => {
  const group = ctx.store.groups.get(params.group ?? '');
  if (!group) return notFound('Group\\Group');
  ctx.store.deleteGroup(group);
  return { status: 204, body: null };
};

// GET /api/fields: the account's fields, MailerLite's defaults and its custom ones, each {id, name, key, type},
// in MailerLite's paging envelope; limit, page and filter[keyword] (partial match on name or key). Read by the
// operator's launch check (ops/doctor/), which looks for the `source` field.
const listFields: Handler = (ctx, _params, query) => {
  const paging = pagingOf(query);
  if ('status' in paging) return paging;
  const { limit, page } = paging;
  const keyword = query.get('filter[keyword]')?.toLowerCase();
  const fields = ctx.store.fieldKeys
    .map((key, index) => ({
      id: String(100_000 + index),
      name: key === 'z_i_p' ? 'ZIP' : key.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase()),
      key,
      type: 'text',
    }))
    .filter((field) => !keyword || field.key.includes(keyword) || field.name.toLowerCase().includes(keyword));
  return { status: 200, body: pageOf(fields, page, limit, `${ctx.baseUrl}/fields`) };
};

const ROUTES: Route[] = [
  route('POST', '/api/subscribers', upsertSubscriber),
  route('GET', '/api/subscribers/{subscriber}', getSubscriber),
  route('POST', '/api/subscribers/{subscriber}/forget', forgetSubscriber),
  route('GET', '/api/groups', listGroups),
  route('POST', '/api/groups', createGroup),
  route('DELETE', '/api/groups/{group}', deleteGroup),
  route('GET', '/api/fields', listFields),
];

// Real endpoints the functions do not use. They are refused with 501 and a message naming them, rather than
// a 404 that would claim MailerLite has no such endpoint.
const NOT_IMPLEMENTED: Array<{ method: string; pattern: RegExp }> = [
  ['GET', '/api/subscribers'],
  ['PUT', '/api/subscribers/{subscriber}'],
  ['DELETE', '/api/subscribers/{subscriber}'],
  ['POST', '/api/subscribers/{subscriber}/groups/{group}'],
  ['DELETE', '/api/subscribers/{subscriber}/groups/{group}'],
  ['PUT', '/api/groups/{group}'],
  ['GET', '/api/groups/{group}/subscribers'],
  ['POST', '/api/groups/{group}/import-subscribers'],
  ['GET', '/api/subscribers/import/{import}'],
  ['POST', '/api/fields'],
  ['GET', '/api/fields/{id}'],
  ...['/api/segments', '/api/campaigns', '/api/automations', '/api/forms', '/api/webhooks'].flatMap(
    (base) => [
      ['GET', base],
      ['POST', base],
      ['GET', `${base}/{id}`],
    ],
  ),
].map(([method = '', path = '']) => ({ method, pattern: compile(path).pattern }));

export function matchRoute(method: string, pathname: string): RouteMatch {
  const allowed: string[] = [];
  for (const r of ROUTES) {
    const m = r.pattern.exec(pathname);
    if (!m) continue;
    if (r.method !== method) {
      allowed.push(r.method);
      continue;
    }
    const params: Record<string, string> = {};
    r.names.forEach((name, i) => {
      params[name] = safeDecode(m[i + 1] ?? '');
    });
    return { kind: 'found', handler: r.handler, params };
  }
  if (NOT_IMPLEMENTED.some((r) => r.method === method && r.pattern.test(pathname))) {
    return { kind: 'not-implemented' };
  }
  if (allowed.length > 0) return { kind: 'method-not-allowed', allowed };
  return { kind: 'not-found' };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The answer for a request that matched no handler (Laravel's messages for 404 and 405). */
export function unmatchedResult(
  match: Exclude<RouteMatch, { kind: 'found' }>,
  method: string,
  pathname: string,
) {
  const routePath = pathname.replace(/^\//, '');
  switch (match.kind) {
    case 'not-found':
      return { status: 404, body: { message: `The route ${routePath} could not be found.` } };
    case 'method-not-allowed':
      return {
        status: 405,
        body: {
          message: `The ${method} method is not supported for route ${routePath}. Supported methods: ${match.allowed.join(', ')}.`,
        },
      };
    case 'not-implemented':
      return {
        status: 501,
        body: { message: `The MailerLite stand-in does not implement ${method} ${routePath}.` },
      };
  }
}

export function dispatch(
  ctx: ApiContext,
  method: string,
  pathname: string,
  query: URLSearchParams,
  body: Record<string, unknown>,
): ApiResult {
  const match = matchRoute(method, pathname);
  if (match.kind !== 'found') return unmatchedResult(match, method, pathname);
  return match.handler(ctx, match.params, query, body);
}
