import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { MailerLiteStandIn } from '../../../stand-ins/mailerlite/index.ts';
import { recordingLogger } from '../../test-support/logs';
import {
  deleteGroupInMailerLite,
  mailerLiteClient,
  resetMailerLite,
  startMailerLite,
} from '../../test-support/mailerlite';
import { type Clock, systemClock } from '../clock';
import { MailerLiteClient, retryAfterMs } from './client';
import {
  MailerLiteAuthError,
  MailerLiteConfiguredGroupError,
  MailerLiteNetworkError,
  MailerLiteRateLimitError,
  MailerLiteRequestError,
  MailerLiteTimeoutError,
  MailerLiteValidationError,
} from './errors';
import { clearGroupCache, GroupHolder, groupIdsRefusedBy } from './groups';

let ml: MailerLiteStandIn;

beforeAll(async () => {
  ml = await startMailerLite();
});
afterAll(() => ml.stop());
beforeEach(() => {
  resetMailerLite(ml);
  clearGroupCache();
});

/** The system clock, recording every wait the client asks for. */
function recordingClock(): Clock & { sleeps: number[] } {
  const sleeps: number[] = [];
  return {
    sleeps,
    now: systemClock.now,
    sleep: (ms, signal) => {
      sleeps.push(ms);
      return systemClock.sleep(ms, signal);
    },
  };
}

const apiRequests = () => ml.state.requests.filter((request) => request.path.startsWith('/api/'));

describe('every request', () => {
  let server: ReturnType<typeof createServer>;
  const seen: Array<{ method: string; headers: IncomingHttpHeaders }> = [];

  beforeAll(async () => {
    // A bare loopback server, to read the headers exactly as they arrive.
    server = createServer((req, res) => {
      seen.push({ method: req.method ?? '', headers: req.headers });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"data":[],"meta":{"last_page":1}}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('carries the Bearer key, Content-Type and Accept, on reads and writes alike', async () => {
    const { port } = server.address() as AddressInfo;
    const client = new MailerLiteClient({ apiKey: 'secret-key', baseUrl: `http://127.0.0.1:${port}/api/` });
    await client.findGroups('GOODY');
    await client.request('POST', '/subscribers', { email: 'kid@example.com' });
    expect(seen.map((request) => request.method)).toEqual(['GET', 'POST']);
    for (const { headers } of seen) {
      expect(headers.authorization).toBe('Bearer secret-key');
      expect(headers['content-type']).toBe('application/json');
      expect(headers.accept).toBe('application/json');
    }
  });
});

describe('subscribers', () => {
  it('upserts: 201 for a new subscriber, 200 for an existing one, with its string id intact', async () => {
    const client = mailerLiteClient(ml);
    const first = await client.upsertSubscriber({
      email: 'kid@example.com',
      fields: { source: 'hero_form' },
    });
    const second = await client.upsertSubscriber({ email: 'kid@example.com' });
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    const stored = ml.state.subscribers[0];
    // Above 2^53: a JSON number would have lost digits.
    expect(BigInt(first.subscriber.id) > 2n ** 53n).toBe(true);
    expect(first.subscriber.id).toBe(stored?.id);
    expect(second.subscriber.id).toBe(stored?.id);
    expect(stored?.fields.source).toBe('hero_form');
  });

  it('finds a subscriber by address, and says null for an unknown one', async () => {
    const client = mailerLiteClient(ml);
    await client.upsertSubscriber({ email: 'kid@example.com' });
    expect((await client.getSubscriber('kid@example.com'))?.email).toBe('kid@example.com');
    expect(await client.getSubscriber('nobody@example.com')).toBeNull();
  });

  it('turns a 422 into a validation error with MailerLite field errors', async () => {
    const error = await mailerLiteClient(ml)
      .upsertSubscriber({ email: 'not an address' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MailerLiteValidationError);
    expect((error as MailerLiteValidationError).errors).toEqual({
      email: ['The email must be a valid email address.'],
    });
    expect(apiRequests()).toHaveLength(1);
  });

  it('turns a 401 into an auth error at once, without retrying', async () => {
    const error = await mailerLiteClient(ml, { apiKey: 'wrong' })
      .upsertSubscriber({ email: 'kid@example.com' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MailerLiteAuthError);
    expect((error as Error).message).toContain('Unauthenticated.');
    expect((error as Error).message).not.toContain('wrong');
    expect(apiRequests()).toHaveLength(1);
  });
});

describe('retries', () => {
  it('waits out a 429 for as long as Retry-After says, then succeeds', async () => {
    ml.faults.failNext(1, 429, undefined, { headers: { 'Retry-After': '1' } });
    const clock = recordingClock();
    const result = await mailerLiteClient(ml, { clock }).upsertSubscriber({ email: 'kid@example.com' });
    expect(result.created).toBe(true);
    expect(clock.sleeps).toHaveLength(1);
    expect(clock.sleeps[0]).toBeGreaterThanOrEqual(1_000);
    expect(apiRequests().map((request) => request.status)).toEqual([429, 201]);
  });

  it('gives up on a 429 at once when Retry-After would pass the deadline', async () => {
    ml.faults.failNext(1, 429, undefined, { headers: { 'Retry-After': '30' } });
    const clock = recordingClock();
    const error = await mailerLiteClient(ml, { clock })
      .upsertSubscriber({ email: 'kid@example.com' }, { deadline: Date.now() + 5_000 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MailerLiteRateLimitError);
    expect((error as MailerLiteRateLimitError).retryAfterMs).toBe(30_000);
    expect(clock.sleeps).toEqual([]);
  });

  it('retries 500 and 408 with backoff, then succeeds', async () => {
    ml.faults.failNext(1, 500);
    ml.faults.failNext(1, 408);
    const clock = recordingClock();
    await mailerLiteClient(ml, { clock }).upsertSubscriber({ email: 'kid@example.com' });
    expect(apiRequests().map((request) => request.status)).toEqual([500, 408, 201]);
    expect(clock.sleeps).toHaveLength(2);
    expect(clock.sleeps[1] as number).toBeGreaterThan(0);
  });

  it('stops after maxAttempts when the server keeps failing', async () => {
    ml.faults.failNext(10, 503);
    const error = await mailerLiteClient(ml, { maxAttempts: 3 })
      .upsertSubscriber({ email: 'kid@example.com' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MailerLiteRequestError);
    expect((error as MailerLiteRequestError).status).toBe(503);
    expect(apiRequests()).toHaveLength(3);
  });

  it('does not retry a 4xx other than 408 and 429', async () => {
    ml.faults.failNext(1, 400, { message: 'Bad request.' });
    await expect(mailerLiteClient(ml).upsertSubscriber({ email: 'kid@example.com' })).rejects.toThrow('400');
    expect(apiRequests()).toHaveLength(1);
  });

  it('does not repeat a request that is not idempotent after a 500', async () => {
    ml.faults.failNext(1, 500, undefined, { pathPrefix: '/api/groups', method: 'POST' });
    await expect(mailerLiteClient(ml).createGroup('GOODY Club')).rejects.toBeInstanceOf(
      MailerLiteRequestError,
    );
    expect(ml.state.groups).toEqual([]);
    expect(apiRequests()).toHaveLength(1);
  });

  it('times out a slow answer, and retries it', async () => {
    ml.faults.latencyMs = 400;
    const error = await mailerLiteClient(ml, { timeoutMs: 100, maxAttempts: 2 })
      .upsertSubscriber({ email: 'kid@example.com' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MailerLiteTimeoutError);
    // Both attempts reached the server; neither answer was waited for.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(apiRequests()).toHaveLength(2);
  });

  it('retries a dropped connection', async () => {
    ml.faults.dropNext(1);
    const result = await mailerLiteClient(ml).upsertSubscriber({ email: 'kid@example.com' });
    expect(result.created).toBe(true);
    expect(apiRequests().map((request) => request.status)).toEqual([0, 201]);
  });

  it('reports an unreachable service as a network error', async () => {
    ml.faults.down = true;
    const error = await mailerLiteClient(ml, { maxAttempts: 2 })
      .upsertSubscriber({ email: 'kid@example.com' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MailerLiteNetworkError);
    expect(error).toMatchObject({ transient: true });
  });

  it('reads the rate-limit headers of every answer', async () => {
    const client = mailerLiteClient(ml);
    await client.upsertSubscriber({ email: 'kid@example.com' });
    await client.upsertSubscriber({ email: 'teen@example.com' });
    expect(client.rateLimit).toMatchObject({ limit: 120, remaining: 118 });
  });
});

describe('groups', () => {
  const config = { updates: 'GOODY launch updates', club: '139790465506477360' };
  const holder = (client = mailerLiteClient(ml)) => new GroupHolder(client, config, recordingLogger());
  const methods = () => apiRequests().map((request) => request.method);

  it('uses a configured id as is, without a request', async () => {
    expect(await holder().id('club')).toBe('139790465506477360');
    expect(apiRequests()).toEqual([]);
  });

  it('finds a group by its exact name, whatever the case, among partial matches', async () => {
    ml.addGroup('GOODY launch updates (old)');
    const id = ml.addGroup('goody LAUNCH updates');
    expect(await holder().id('updates')).toBe(id);
    expect(ml.state.groups).toHaveLength(2);
  });

  it('creates a missing group once, then answers from the cache', async () => {
    const client = mailerLiteClient(ml);
    const [first, second] = await Promise.all([holder(client).id('updates'), holder(client).id('updates')]);
    const third = await holder(client).id('updates');
    expect(new Set([first, second, third]).size).toBe(1);
    expect(ml.state.groups.map((group) => group.name)).toEqual(['GOODY launch updates']);
    expect(methods()).toEqual(['GET', 'POST']);
  });

  it('reads the ids MailerLite refused from its 422, by index into the groups sent', async () => {
    const client = mailerLiteClient(ml);
    const existing = ml.addGroup('Launch list');
    const sent = [existing, '999', '998'];
    const error = await client
      .upsertSubscriber({ email: 'kid@example.com', groups: sent })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MailerLiteValidationError);
    expect((error as MailerLiteValidationError).errors).toEqual({
      'groups.1': ['The selected groups.1 is invalid.'],
      'groups.2': ['The selected groups.2 is invalid.'],
    });
    expect(groupIdsRefusedBy(error, sent)).toEqual(['999', '998']);

    const badAddress = await client
      .upsertSubscriber({ email: 'not an address', groups: [existing] })
      .catch((caught: unknown) => caught);
    expect(groupIdsRefusedBy(badAddress, [existing])).toEqual([]);
  });

  it('never resolves a configured id again: the error names the param to fix, and nothing is sent', async () => {
    const club = holder();
    await club.id('club');
    const error = await club.reResolve('club').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MailerLiteConfiguredGroupError);
    expect((error as MailerLiteConfiguredGroupError).param).toBe('MAILERLITE_GROUP_CLUB');
    expect(apiRequests()).toEqual([]);
  });

  it('drops a cached name only while it still holds the refused id', async () => {
    const client = mailerLiteClient(ml);
    const [first, second] = [holder(client), holder(client)];
    const id = await first.id('updates');
    expect(await second.id('updates')).toBe(id);
    await deleteGroupInMailerLite(ml, id);
    // The first to hear the id is gone looks the name up again, and creates the group anew.
    const fresh = await first.reResolve('updates');
    expect(fresh).not.toBe(id);
    expect(methods()).toEqual(['GET', 'POST', 'DELETE', 'GET', 'POST']);
    // The second finds the cache already replaced: its result is used, nothing is looked up.
    expect(await second.reResolve('updates')).toBe(fresh);
    expect(methods()).toHaveLength(5);
    // The cached id itself refused: looked up again, found, so nothing to resend and no group created.
    const third = holder(client);
    await third.id('updates');
    expect(await third.reResolve('updates')).toBeNull();
    expect(methods()).toEqual(['GET', 'POST', 'DELETE', 'GET', 'POST', 'GET']);
  });

  it('does not cache a failed lookup', async () => {
    const client = mailerLiteClient(ml, { maxAttempts: 1 });
    ml.faults.failNext(1, 500);
    await expect(holder(client).id('updates')).rejects.toBeInstanceOf(MailerLiteRequestError);
    const id = await holder(client).id('updates');
    expect(ml.state.groups.map((group) => group.id)).toEqual([id]);
  });
});

describe('Retry-After', () => {
  const headers = (value: string) => new Headers({ 'Retry-After': value });

  it('reads whole seconds, fractions and HTTP dates', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(headers('2'), now)).toBe(2_000);
    expect(retryAfterMs(headers('0.734'), now)).toBe(734);
    expect(retryAfterMs(headers('Thu, 01 Jan 2026 00:00:05 GMT'), now)).toBe(5_000);
    expect(retryAfterMs(headers('soon'), now)).toBeNull();
    expect(retryAfterMs(new Headers(), now)).toBeNull();
  });
});
