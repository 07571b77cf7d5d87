// The MailerLite API endpoints the stand-in serves, as documented at developers.mailerlite.com (Subscribers,
// Groups, Fields) and as recorded in mailerlite/mailerlite-python's VCR cassettes. Handlers are plain
// functions of (context, params, query, body).

import {
  formatTimestamp,
  isValidEmail,
  type Store,
  SUBSCRIBER_STATUSES,
  type SubscriberStatus,
} from './store.ts';
import { isPlainObject, Validator } from './validation.ts';

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

/** A route of `path`, whose `{name}` segments become the handler's params. */
function route(method: string, path: string, handler: Handler) {
  return { method, handler, pattern: new RegExp(`^${path.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}$`) };
}

function notFound(model: string): ApiResult {
  return { status: 404, body: { message: `No query results for model [App\\Models\\${model}].` } };
}

function invalid(v: Validator): ApiResult {
  return { status: 422, body: { message: 'The given data was invalid.', errors: v.errors } };
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
  const { email, fields, groups, status } = body;
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
  if (status !== undefined && !(SUBSCRIBER_STATUSES as readonly unknown[]).includes(status)) {
    v.invalidSelection('status');
  }
  // Laravel's date_format:Y-m-d H:i:s, as the docs give opted_in_at ("2021-08-31 14:22:08").
  const optedInAt = body.opted_in_at;
  if (optedInAt !== undefined && optedInAt !== null && !isMailerLiteTime(optedInAt)) {
    v.add('opted_in_at', 'The opted in at does not match the format Y-m-d H:i:s.');
  }
  if (v.failed) return invalid(v);

  const existing = ctx.store.findSubscriber(email as string);
  const subscriber = existing ?? ctx.store.createSubscriber(email as string, ctx.now, 'api');
  if (isPlainObject(fields)) ctx.store.mergeFields(subscriber, fields);
  subscriber.groupIds = [...new Set([...subscriber.groupIds, ...groupIds])];
  if (typeof status === 'string' && status !== subscriber.status) {
    subscriber.status = status as SubscriberStatus;
    if (status === 'unsubscribed') subscriber.unsubscribedAt = ctx.now;
    if (status === 'active') {
      subscriber.unsubscribedAt = null;
      subscriber.subscribedAt = ctx.now;
    }
  }
  if (typeof body.opted_in_at === 'string') subscriber.optedInAt = body.opted_in_at;
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
  ctx.store.subscribers.delete(subscriber.id);
  return {
    status: 200,
    body: { data, message: 'Subscriber data will be completely deleted and forgotten within 30 days.' },
  };
};

function isMailerLiteTime(value: unknown): boolean {
  const ms = typeof value === 'string' ? Date.parse(`${value.replace(' ', 'T')}Z`) : Number.NaN;
  return Number.isFinite(ms) && formatTimestamp(ms) === value;
}

/** A listing's `limit` (default 100) and `page` (from 1), or the 422 MailerLite answers to either not a whole number. */
function pagingOf(query: URLSearchParams) {
  const v = new Validator();
  const [limit = 100, page = 1] = (['limit', 'page'] as const).map((name, index) => {
    const raw = query.get(name) || String(index === 0 ? 100 : 1);
    if (/^\d+$/.test(raw) && Number(raw) >= 1) return Number(raw);
    v.add(name, `The ${name} must be an integer.`);
    return undefined;
  });
  return v.failed ? invalid(v) : { limit, page };
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

// POST /api/groups: {name} (at most 255 characters) -> 201 with the group.
const createGroup: Handler = (ctx, _params, _query, { name }) => {
  const v = new Validator();
  if (name === undefined || name === null || name === '') v.required('name');
  else if (typeof name !== 'string') v.notString('name');
  else if (name.length > 255) v.tooLong('name', 255);
  if (v.failed) return invalid(v);
  const group = ctx.store.createGroup(name as string, ctx.now);
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
// in MailerLite's paging envelope. Read by the operator's launch check (ops/doctor/), which looks for `source`.
const listFields: Handler = (ctx, _params, query) => {
  const paging = pagingOf(query);
  if ('status' in paging) return paging;
  const { limit, page } = paging;
  const fields = ctx.store.fieldKeys.map((key, index) => ({
    id: String(100_000 + index),
    name: key === 'z_i_p' ? 'ZIP' : key.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase()),
    key,
    type: 'text',
  }));
  return { status: 200, body: pageOf(fields, page, limit, `${ctx.baseUrl}/fields`) };
};

const ROUTES = [
  route('POST', '/api/subscribers', upsertSubscriber),
  route('GET', '/api/subscribers/{subscriber}', getSubscriber),
  route('POST', '/api/subscribers/{subscriber}/forget', forgetSubscriber),
  route('GET', '/api/groups', listGroups),
  route('POST', '/api/groups', createGroup),
  route('DELETE', '/api/groups/{group}', deleteGroup),
  route('GET', '/api/fields', listFields),
];

/** The route's handler and its params, or Laravel's answer to a request no route takes (404, 405). */
export function matchRoute(
  method: string,
  pathname: string,
): { handler: Handler; params: Record<string, string> } | ApiResult {
  const matching = ROUTES.filter((r) => r.pattern.test(pathname));
  const found = matching.find((r) => r.method === method);
  const routePath = pathname.slice(1);
  if (found) {
    const groups = Object.entries(found.pattern.exec(pathname)?.groups ?? {});
    return {
      handler: found.handler,
      params: Object.fromEntries(groups.map(([k, v]) => [k, decodeSafely(v)])),
    };
  }
  if (matching.length === 0) {
    return { status: 404, body: { message: `The route ${routePath} could not be found.` } };
  }
  const allowed = matching.map((r) => r.method).join(', ');
  return {
    status: 405,
    body: {
      message: `The ${method} method is not supported for route ${routePath}. Supported methods: ${allowed}.`,
    },
  };
}

export function decodeSafely(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
