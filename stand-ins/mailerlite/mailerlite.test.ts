// Conformance of the MailerLite stand-in, driven with plain fetch the way the functions' client calls
// connect.mailerlite.com. Expected bodies and headers are MailerLite's documented (or recorded) ones.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type MailerLiteStandIn,
  type MailerLiteStandInOptions,
  type MailerLiteState,
  startMailerLiteStandIn,
} from './index.ts';

let ml: MailerLiteStandIn | undefined;

afterEach(async () => {
  await ml?.stop();
  ml = undefined;
});

async function start(options: MailerLiteStandInOptions = {}): Promise<MailerLiteStandIn> {
  ml = await startMailerLiteStandIn({ quiet: true, ...options });
  return ml;
}

interface CallOptions {
  method?: string;
  body?: unknown;
  key?: string | null;
  signal?: AbortSignal;
}

/** PUT /__control/faults with `faults` as its body, as a test sets the stand-in's faults over HTTP. */
function putFaults(faults: unknown): Promise<Response> {
  if (!ml) throw new Error('stand-in not started');
  return fetch(`${ml.url}/__control/faults`, { method: 'PUT', body: JSON.stringify(faults) });
}

async function call(path: string, { method, body, key, signal }: CallOptions = {}) {
  if (!ml) throw new Error('stand-in not started');
  const headers: Record<string, string> = { Accept: 'application/json', 'Content-Type': 'application/json' };
  const token = key === undefined ? ml.apiKey : key;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(`${ml.baseUrl}${path}`, {
    method: method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  const json: unknown = text === '' ? null : JSON.parse(text);
  // biome-ignore lint/suspicious/noExplicitAny: bodies are checked field by field against the documented shapes; typing them here would only restate the stand-in's own types.
  return { status: response.status, headers: response.headers, text, json: json as any };
}

const TWO_POW_53 = 2n ** 53n;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

function expectLargeId(id: unknown): void {
  expect(typeof id).toBe('string');
  expect(id).toMatch(/^\d+$/);
  expect(BigInt(id as string) > TWO_POW_53).toBe(true);
}

describe('authentication', () => {
  it('answers 401 {"message":"Unauthenticated."} without or with a wrong bearer token, without counting it', async () => {
    await start();
    for (const key of [null, 'wrong-key']) {
      const res = await call('/groups', { key });
      expect(res.status).toBe(401);
      expect(res.text).toBe('{"message":"Unauthenticated."}');
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('x-ratelimit-remaining')).toBeNull();
    }
    const ok = await call('/groups');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-ratelimit-remaining')).toBe('119');
  });
});

describe('subscribers', () => {
  it('creates with 201, then updates the same address with 200 and the same id', async () => {
    await start();
    const created = await call('/subscribers', {
      body: { email: 'Ana@Example.org', fields: { name: 'Ana' } },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toBe('application/json');
    expect(created.headers.get('x-ratelimit-limit')).toBe('120');
    expect(created.headers.get('x-ratelimit-remaining')).toBe('119');
    const data = created.json.data;
    expectLargeId(data.id);
    expect(data).toMatchObject({ email: 'ana@example.org', status: 'active', source: 'api', groups: [] });
    expect(data.fields).toMatchObject({ name: 'Ana', last_name: null, z_i_p: null });
    expect(data.created_at).toMatch(TIMESTAMP);
    expect(data.subscribed_at).toMatch(TIMESTAMP);

    const updated = await call('/subscribers', {
      body: { email: 'ana@example.org', fields: { last_name: 'Li' } },
    });
    expect(updated.status).toBe(200);
    expect(updated.headers.get('x-ratelimit-remaining')).toBe('118');
    expect(updated.json.data.id).toBe(data.id);
    // Non-destructive: fields left out are kept.
    expect(updated.json.data.fields).toMatchObject({ name: 'Ana', last_name: 'Li' });
  });

  it('adds the groups given on each upsert to the ones the subscriber already has', async () => {
    const standIn = await start();
    const updates = await call('/groups', { body: { name: 'updates' } });
    const club = await call('/groups', { body: { name: 'club' } });
    expect(updates.status).toBe(201);
    expectLargeId(updates.json.data.id);
    expect(updates.json.data.created_at).toMatch(TIMESTAMP);
    const updatesId: string = updates.json.data.id;
    const clubId: string = club.json.data.id;

    await call('/subscribers', { body: { email: 'kid@example.org', groups: [updatesId] } });
    const second = await call('/subscribers', { body: { email: 'kid@example.org', groups: [clubId] } });
    expect(second.status).toBe(200);
    expect(second.json.data.groups.map((g: { id: string }) => g.id).sort()).toEqual(
      [updatesId, clubId].sort(),
    );
    const third = await call('/subscribers', { body: { email: 'kid@example.org' } });
    expect(third.json.data.groups).toHaveLength(2);

    const [stored] = standIn.state.subscribers;
    expect(stored?.groups.sort()).toEqual([updatesId, clubId].sort());
    expect(standIn.state.groups.map((g) => g.subscriberCount)).toEqual([1, 1]);
  });

  it("lists the account's fields, its custom ones among the defaults", async () => {
    await start({ customFields: ['source'] });
    const res = await call('/fields?limit=100');
    expect(res.status).toBe(200);
    const keys = (res.json.data as Array<{ key: string; type: string }>).map((field) => field.key);
    expect(keys).toContain('name');
    expect(keys).toContain('source');
    expect(res.json.meta.last_page).toBe(1);
    await ml?.stop();
    await start();
    expect(((await call('/fields')).json.data as Array<{ key: string }>).map((f) => f.key)).not.toContain(
      'source',
    );
  });

  it('drops field values for keys the account does not have', async () => {
    const standIn = await start({ customFields: ['source'] });
    const res = await call('/subscribers', {
      body: { email: 'a@example.org', fields: { source: 'hero_form', not_a_field: 'x' } },
    });
    expect(res.status).toBe(201);
    expect(res.json.data.fields.source).toBe('hero_form');
    expect(res.json.data.fields).not.toHaveProperty('not_a_field');
    expect(standIn.state.subscribers[0]?.fields).toEqual({ source: 'hero_form' });
  });

  it('answers 422 with the Laravel validation envelope', async () => {
    await start();
    const badEmail = await call('/subscribers', { body: { email: 'not-an-address' } });
    expect(badEmail.status).toBe(422);
    expect(badEmail.json).toEqual({
      message: 'The given data was invalid.',
      errors: { email: ['The email must be a valid email address.'] },
    });

    const missing = await call('/subscribers', { body: {} });
    expect(missing.status).toBe(422);
    expect(missing.json.errors).toEqual({ email: ['The email field is required.'] });

    const unknownGroupAndStatus = await call('/subscribers', {
      body: { email: 'ok@example.org', groups: ['123456789012345678'], status: 'happy' },
    });
    expect(unknownGroupAndStatus.status).toBe(422);
    expect(unknownGroupAndStatus.json.errors).toEqual({
      'groups.0': ['The selected groups.0 is invalid.'],
      status: ['The selected status is invalid.'],
    });

    const malformedJson = await fetch(`${ml?.baseUrl}/subscribers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ml?.apiKey}`, 'Content-Type': 'application/json' },
      body: '{"email":',
    });
    expect(malformedJson.status).toBe(422);
  });

  it('reads a subscriber by id or by address, and answers 404 for one that does not exist', async () => {
    await start();
    const created = await call('/subscribers', { body: { email: 'b@example.org' } });
    const id: string = created.json.data.id;
    const byId = await call(`/subscribers/${id}`);
    expect(byId.status).toBe(200);
    expect(byId.json.data.email).toBe('b@example.org');
    const byEmail = await call(`/subscribers/${encodeURIComponent('B@example.org')}`);
    expect(byEmail.status).toBe(200);
    expect(byEmail.json.data.id).toBe(id);
    const missing = await call('/subscribers/nobody@example.org');
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({
      message: 'No query results for model [App\\Models\\Subscriber\\Subscriber].',
    });
  });

  it('forgets a subscriber (GDPR): 200 with its data and the 30-day notice, gone at once, 404 the second time', async () => {
    await start();
    const created = await call('/subscribers', { body: { email: 'kid@example.org' } });
    const id: string = created.json.data.id;
    const forgotten = await call(`/subscribers/${id}/forget`, { method: 'POST' });
    expect(forgotten.status).toBe(200);
    expect(forgotten.json.data).toMatchObject({ id, email: 'kid@example.org' });
    expect(forgotten.json.message).toBe(
      'Subscriber data will be completely deleted and forgotten within 30 days.',
    );
    expect((await call('/subscribers/kid@example.org')).status).toBe(404);
    expect(ml?.state.subscribers).toEqual([]);
    expect((await call(`/subscribers/${id}/forget`, { method: 'POST' })).status).toBe(404);
  });

  it("keeps opted_in_at in MailerLite's format, and refuses any other with 422", async () => {
    await start();
    const ok = await call('/subscribers', {
      body: { email: 'a@example.org', opted_in_at: '2026-01-15 09:30:05' },
    });
    expect(ok.status).toBe(201);
    expect(ok.json.data.opted_in_at).toBe('2026-01-15 09:30:05');
    for (const value of ['2026-01-15T09:30:05Z', '2026-02-30 10:00:00', '15.01.2026 09:30', 42]) {
      const refused = await call('/subscribers', { body: { email: 'b@example.org', opted_in_at: value } });
      expect(refused.status, String(value)).toBe(422);
      expect(refused.json.errors).toEqual({
        opted_in_at: ['The opted in at does not match the format Y-m-d H:i:s.'],
      });
    }
  });
});

describe('groups', () => {
  it('lists groups with a partial, case-insensitive name filter and page-based pagination', async () => {
    await start();
    for (const name of ['Updates', 'Club', 'Club alumni']) {
      expect((await call('/groups', { body: { name } })).status).toBe(201);
    }
    const filtered = await call(`/groups?${new URLSearchParams({ 'filter[name]': 'club' })}`);
    expect(filtered.status).toBe(200);
    expect(filtered.json.data.map((g: { name: string }) => g.name)).toEqual(['Club', 'Club alumni']);

    const page2 = await call('/groups?limit=2&page=2');
    expect(page2.json.data.map((g: { name: string }) => g.name)).toEqual(['Club alumni']);
    expect(page2.json.meta).toMatchObject({
      current_page: 2,
      last_page: 2,
      per_page: 2,
      total: 3,
      from: 3,
      to: 3,
    });
    expect(page2.json.links.next).toBeNull();
    expect(page2.json.links.prev).toBe(`${ml?.baseUrl}/groups?page=1`);
  });

  it('refuses a group without a name', async () => {
    await start();
    const res = await call('/groups', { body: {} });
    expect(res.status).toBe(422);
    expect(res.json.errors).toEqual({ name: ['The name field is required.'] });
  });
});

describe('rate limits', () => {
  it('answers 429 with Retry-After once the window is used up', async () => {
    await start({ requestsPerWindow: 3, windowMs: 60_000 });
    expect((await call('/groups')).headers.get('x-ratelimit-remaining')).toBe('2');
    expect((await call('/groups')).headers.get('x-ratelimit-remaining')).toBe('1');
    expect((await call('/groups')).headers.get('x-ratelimit-remaining')).toBe('0');

    const limited = await call('/groups');
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ message: 'Too Many Attempts.' });
    expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });

  it('opens a fresh window once the previous one has passed', async () => {
    await start({ requestsPerWindow: 2, windowMs: 200 });
    expect((await call('/groups')).status).toBe(200);
    expect((await call('/groups')).status).toBe(200);
    const limited = await call('/groups');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    await new Promise((resolve) => setTimeout(resolve, 250));
    const fresh = await call('/groups');
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('x-ratelimit-remaining')).toBe('1');
  });

  it('reports Retry-After as the whole seconds left in the window', async () => {
    let clock = Date.UTC(2025, 0, 1);
    await start({ requestsPerWindow: 1, windowMs: 60_000, now: () => clock });
    expect((await call('/groups')).status).toBe(200);
    clock += 20_500;
    const limited = await call('/groups');
    expect(limited.headers.get('retry-after')).toBe('40');
    clock += 39_500;
    expect((await call('/groups')).status).toBe(200);
  });
});

describe('routes', () => {
  it('answers unknown routes with 404 and wrong methods with 405', async () => {
    await start();
    const unknown = await call('/campaigns/list/x');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ message: 'The route api/campaigns/list/x could not be found.' });
    const wrongMethod = await call('/subscribers/e@example.org/forget');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.json.message).toBe(
      'The GET method is not supported for route api/subscribers/e@example.org/forget. Supported methods: POST.',
    );
  });
});

describe('fault injection', () => {
  it('answers the next N matching requests with the injected status, then recovers', async () => {
    const standIn = await start();
    standIn.faults.failNext(2, 503, undefined, { pathPrefix: '/api/subscribers' });
    expect((await call('/groups')).status).toBe(200);
    const first = await call('/subscribers', { body: { email: 'e@example.org' } });
    expect(first.status).toBe(503);
    expect(first.json).toEqual({ message: 'Service Unavailable.' });
    expect((await call('/subscribers', { body: { email: 'e@example.org' } })).status).toBe(503);
    expect((await call('/subscribers', { body: { email: 'e@example.org' } })).status).toBe(201);
    expect(standIn.state.requests.map((r) => [r.status, r.fault])).toEqual([
      [200, undefined],
      [503, 'status'],
      [503, 'status'],
      [201, undefined],
    ]);
  });

  it('delays answers by the injected latency, so a client timeout fires', async () => {
    const standIn = await start();
    standIn.faults.latencyMs = 1_000;
    await expect(call('/groups', { signal: AbortSignal.timeout(100) })).rejects.toThrow(/abort|timeout/i);
    standIn.faults.latencyMs = 0;
    expect((await call('/groups')).status).toBe(200);
  });

  it('drops the next connection without an answer', async () => {
    const standIn = await start();
    standIn.faults.dropNext(1);
    await expect(call('/groups')).rejects.toThrow(/fetch failed/);
    expect((await call('/groups')).status).toBe(200);
    expect(standIn.state.requests[0]).toMatchObject({ status: 0, fault: 'drop' });
  });

  it('while down closes every API request unanswered, but still serves /__control/', async () => {
    const standIn = await start();
    const put = await putFaults({ down: true });
    expect(put.status).toBe(200);
    await expect(call('/groups')).rejects.toThrow(/fetch failed/);
    await expect(call('/subscribers', { body: { email: 'h@example.org' } })).rejects.toThrow(/fetch failed/);
    expect((await fetch(`${standIn.url}/__control/state`)).status).toBe(200);
    expect((await fetch(`${standIn.url}/__control/faults`, { method: 'DELETE' })).status).toBe(200);
    expect((await call('/groups')).status).toBe(200);
    expect(standIn.state.subscribers).toHaveLength(0);
  });

  it('while the key is refused answers every API request 401 as for a wrong key, until the fault is lifted', async () => {
    const standIn = await start();
    const put = await putFaults({ refuseKey: true });
    expect(put.status).toBe(200);
    expect(((await put.json()) as { refuseKey: boolean }).refuseKey).toBe(true);
    for (const path of ['/groups', '/subscribers']) {
      const res = await call(path, path === '/groups' ? {} : { body: { email: 'k@example.org' } });
      expect(res.status).toBe(401);
      expect(res.text).toBe('{"message":"Unauthenticated."}');
      expect(res.headers.get('x-ratelimit-remaining')).toBeNull();
    }
    expect(standIn.state.subscribers).toEqual([]);
    await putFaults({ refuseKey: false });
    expect((await call('/subscribers', { body: { email: 'k@example.org' } })).status).toBe(201);
  });

  it('takes status faults over HTTP, and refuses a malformed fault body with 400', async () => {
    const standIn = await start();
    const put = await putFaults({
      failNext: { count: 1, status: 429, body: { message: 'Too Many Attempts.' } },
    });
    expect(put.status).toBe(200);
    const limited = await call('/groups');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    const bad = await putFaults({ failNext: { status: 'x' } });
    expect(bad.status).toBe(400);
    expect(standIn.state.faults.failNext).toEqual([]);
  });
});

describe('control', () => {
  it('exposes state with e-mail addresses masked in the request log, and resets everything', async () => {
    const standIn = await start();
    const groupId = standIn.addGroup('updates');
    await call('/subscribers', { body: { email: 'kid@example.org', groups: [groupId] } });
    await call('/subscribers/kid@example.org');

    const state = (await (await fetch(`${standIn.url}/__control/state`)).json()) as MailerLiteState;
    expect(state.subscribers).toMatchObject([
      { email: 'kid@example.org', groups: [groupId], status: 'active' },
    ]);
    expect(state.groups).toMatchObject([{ id: groupId, name: 'updates', subscriberCount: 1 }]);
    expect(state.requests.map((r: { method: string; path: string }) => `${r.method} ${r.path}`)).toEqual([
      'POST /api/subscribers',
      'GET /api/subscribers/k***@e***',
    ]);
    expect(JSON.stringify(state.requests)).not.toContain('kid@example.org');
    expect(state.rateLimit.remaining).toBe(118);

    expect((await fetch(`${standIn.url}/__control/reset`, { method: 'POST' })).status).toBe(204);
    expect(standIn.state).toMatchObject({ subscribers: [], groups: [], requests: [] });
    expect(standIn.state.rateLimit.remaining).toBe(120);
  });

  it('changes limits over HTTP', async () => {
    const standIn = await start();
    const put = await fetch(`${standIn.url}/__control/limits`, {
      method: 'PUT',
      body: JSON.stringify({ requestsPerWindow: 1, windowMs: 5_000 }),
    });
    expect(put.status).toBe(200);
    expect(standIn.limits).toMatchObject({ requestsPerWindow: 1, windowMs: 5_000 });
    expect((await call('/groups')).status).toBe(200);
    expect((await call('/groups')).status).toBe(429);
  });
});

describe('dataDir', () => {
  it('keeps subscribers and groups across a restart, and starts empty without saved data', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'mailerlite-stand-in-'));
    try {
      const first = await start({ dataDir });
      const groupId = first.addGroup('updates');
      await call('/subscribers', { body: { email: 'kid@example.org', groups: [groupId] } });
      await first.stop();
      ml = undefined;

      const second = await start({ dataDir });
      expect(second.state.groups).toMatchObject([{ id: groupId, name: 'updates', subscriberCount: 1 }]);
      const found = await call('/subscribers/kid@example.org');
      expect(found.status).toBe(200);
      await second.stop();
      ml = undefined;

      const fresh = await start({ dataDir: join(dataDir, 'elsewhere') });
      expect(fresh.state).toMatchObject({ subscribers: [], groups: [] });
      await fresh.stop();
      ml = undefined;
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
