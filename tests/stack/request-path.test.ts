// bench:signup's phone price (tests/bench/request-path.ts) against answers known in advance: tiny pages on
// loopback whose one press makes a same-origin POST (1 round trip, no preflight, no new connection: the page
// came over it), a cross-origin POST with Content-Type application/json to an origin not yet connected
// (preflight on a new connection + the request: 1 + 2 + 1 = 4 round trips) and the same after a preconnect
// (2). Each is then run again through a slow link (tests/bench/delayed-link.ts: every chunk RTT/2 late each
// way, a new connection's first bytes held for TCP + TLS), which must take what the price said.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { delayedLink } from '../bench/delayed-link.ts';
import {
  type Link,
  type PricedPath,
  pricePath,
  type RecordedRequest,
  RequestRecorder,
} from '../bench/request-path.ts';
import { chromiumArgs, findChromium } from '../e2e/chromium.ts';

const LINK: Link = { rttMs: 150, downloadKbps: 1_600, uploadKbps: 750, connectionRoundTrips: 2 };

function request(overrides: Partial<RecordedRequest> & Pick<RecordedRequest, 'id'>): RecordedRequest {
  return {
    method: 'POST',
    url: `http://127.0.0.1:9/${overrides.id}`,
    type: 'Fetch',
    startedAt: 0,
    finishedAt: 1,
    status: 200,
    fromCache: false,
    uploadBytes: 0,
    downloadBytes: 0,
    ...overrides,
  };
}

describe('pricePath', () => {
  const window = { pressAt: 0, toastAt: 1_000, measuredMs: 1_000 };

  it('counts a chain of requests one after the other, a preflight with its request, a new connection as TCP + TLS', () => {
    const path = pricePath(
      [
        request({
          id: 'p',
          method: 'OPTIONS',
          preflightFor: 'a',
          startedAt: 11,
          finishedAt: 14,
          localConnectMs: 2,
        }),
        request({ id: 'a', startedAt: 10, sentAt: 15, finishedAt: 20 }),
        request({ id: 'b', startedAt: 21, finishedAt: 30 }),
      ],
      window,
      LINK,
    );
    expect(path.requests.map((item) => [item.request.id, item.roundTrips, item.onPath])).toEqual([
      ['p', 3, true],
      ['a', 1, true],
      ['b', 1, true],
    ]);
    expect(path.localOnPathMs).toBe(10 + 9);
    expect(path.pageMs).toBe(1_000 - 19);
    expect([path.roundTrips, path.preflights, path.newConnections]).toEqual([5, 1, 1]);
    // The page's own time (the measure less the chain's local time), and the link's.
    expect(path.pricedMs).toBe(1_000 - (10 + 9) + 5 * 150);
  });

  it('counts requests that ran side by side once, the dearer one', () => {
    const path = pricePath(
      [
        request({ id: 'a', startedAt: 10, finishedAt: 20 }),
        request({ id: 'b', startedAt: 12, finishedAt: 25, localConnectMs: 1 }),
        request({ id: 'c', startedAt: 30, finishedAt: 40 }),
      ],
      window,
      LINK,
    );
    expect(path.requests.filter((item) => item.onPath).map((item) => item.request.id)).toEqual(['b', 'c']);
    expect(path.roundTrips).toBe(4);
  });

  it('takes out of the measure only what a request in flight at the press took after it', () => {
    const path = pricePath([request({ id: 'early', startedAt: -40, finishedAt: 30 })], window, LINK);
    expect(path.requests[0]?.inFlightAtPress).toBe(true);
    expect([path.roundTrips, path.localOnPathMs, path.pricedMs]).toEqual([1, 30, 1_000 - 30 + 150]);
  });

  it("counts the press's last request that the two clocks see end a fraction of a millisecond after the toast", () => {
    // Seen in CI: the page's toast and DevTools' record of its POST are two clocks' epoch time, 0.3 ms apart.
    const path = pricePath([request({ id: 'last', startedAt: 990, finishedAt: 1_000.3 })], window, LINK);
    expect(path.requests.map((item) => item.request.id)).toEqual(['last']);
    expect(path.roundTrips).toBe(1);
  });

  it('prices the bytes at the link rates, and leaves out what was cached, unanswered, or finished outside the window', () => {
    const path = pricePath(
      [
        request({ id: 'bytes', startedAt: 10, finishedAt: 20, uploadBytes: 750, downloadBytes: 1_600 }),
        request({ id: 'cached', startedAt: 21, finishedAt: 22, fromCache: true }),
        request({ id: 'refused', startedAt: 23, finishedAt: 24, status: undefined, failed: 'net::ERR' }),
        request({ id: 'before', startedAt: -20, finishedAt: -10 }),
        request({ id: 'after', startedAt: 990, finishedAt: 1_010 }),
        request({ id: 'data', url: 'data:,x', startedAt: 30, finishedAt: 31 }),
      ],
      window,
      LINK,
    );
    expect(path.requests.map((item) => [item.request.id, item.roundTrips])).toEqual([
      ['bytes', 1],
      ['cached', 0],
      ['refused', 0],
    ]);
    // 750 bytes up at 750 kbit/s and 1,600 down at 1,600 kbit/s: 8 ms each way.
    expect(path.linkMs).toBeCloseTo(150 + 16, 6);
  });
});

const chromiumPath = findChromium();
if (!chromiumPath) console.warn('request-path: browser checks skipped: no Chromium found');

// One page and one API per server; the page's press posts to ?post=<url> (with ?json=1 as
// application/json) and can preconnect to ?preconnect=<origin> first.
const PAGE = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><button id="go">go</button>
<script>
const q = new URLSearchParams(location.search);
if (q.get('preconnect')) {
  const link = document.createElement('link');
  link.rel = 'preconnect';
  link.href = q.get('preconnect');
  link.crossOrigin = 'anonymous';
  document.head.append(link);
}
document.getElementById('go').addEventListener('click', async () => {
  const pressAt = performance.timeOrigin + performance.now();
  const init = { method: 'POST', body: '{"email":"a@example.com"}' };
  if (q.get('json')) init.headers = { 'Content-Type': 'application/json' };
  await (await fetch(q.get('post'), init)).text();
  const toastAt = performance.timeOrigin + performance.now();
  window.__done = { pressAt, toastAt, measuredMs: toastAt - pressAt };
});
</script>`;

function serve(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const cors = {
      'access-control-allow-origin': '*',
      'access-control-allow-headers': 'content-type',
      'access-control-allow-methods': 'POST',
    };
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    } else if (req.method === 'OPTIONS') {
      res.writeHead(204, cors).end();
    } else {
      req.resume();
      req.on('end', () =>
        res.writeHead(200, { ...cors, 'content-type': 'application/json' }).end('{"ok":1}'),
      );
    }
  });
  // As long as Google's front ends keep a connection: the browser, not the server, decides when to drop it.
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const originOf = (server: http.Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

describe.skipIf(!chromiumPath)('the price of a press on known pages', () => {
  let servers: http.Server[];
  const links: Array<{ close(): Promise<void> }> = [];
  let direct: { site: string; api: string };
  let delayed: { site: string; api: string };

  beforeAll(async () => {
    servers = [await serve(), await serve()];
    const [site, api] = servers as [http.Server, http.Server];
    direct = { site: originOf(site), api: originOf(api) };
    const slow = await Promise.all(
      [site, api].map((server) =>
        delayedLink({ host: '127.0.0.1', port: (server.address() as AddressInfo).port }, LINK),
      ),
    );
    links.push(...slow);
    delayed = { site: (slow[0] as { origin: string }).origin, api: (slow[1] as { origin: string }).origin };
  });

  afterAll(async () => {
    for (const link of links) await link.close();
    for (const server of servers ?? []) {
      server.closeAllConnections();
      server.close();
    }
  });

  let run = 0;
  /**
   * Loads the page in `context` (the direct and the slow origins differ, so neither run finds a connection
   * or a cached preflight of the other), presses, prices the press.
   */
  async function press(
    context: BrowserContext,
    origins: { site: string; api: string },
    target: 'same' | 'cross',
    options: { preconnect?: boolean } = {},
  ): Promise<PricedPath> {
    run += 1;
    const post = `${target === 'same' ? origins.site : origins.api}/api?run=${run}`;
    const query = new URLSearchParams({ post });
    if (target === 'cross') query.set('json', '1');
    if (options.preconnect) query.set('preconnect', origins.api);
    const page = await context.newPage();
    try {
      const recorder = await RequestRecorder.attach(await context.newCDPSession(page));
      await page.goto(`${origins.site}/?${query}`, { waitUntil: 'load' });
      // Time for the preconnect to finish, even through the slow link (TCP + TLS: 300 ms).
      await page.waitForTimeout(800);
      await page.click('#go');
      const window = (await (await page.waitForFunction('window.__done')).jsonValue()) as {
        pressAt: number;
        toastAt: number;
        measuredMs: number;
      };
      await recorder.settled(window.toastAt);
      await recorder.settled(window.toastAt);
      return pricePath(recorder.requests(), window, LINK);
    } finally {
      await page.close();
    }
  }

  const shape = (path: PricedPath) =>
    path.requests.map((item) => ({
      method: item.request.method,
      preflight: item.preflight,
      newConnection: item.newConnection,
      onPath: item.onPath,
    }));

  const cases = [
    {
      name: 'a same-origin POST on the connection the page came over: 1 round trip',
      target: 'same' as const,
      roundTrips: 1,
      requests: [{ method: 'POST', preflight: false, newConnection: false, onPath: true }],
    },
    {
      name: 'a cross-origin JSON POST to a new origin: preflight on a new connection, then the POST: 4 round trips',
      target: 'cross' as const,
      roundTrips: 4,
      requests: [
        { method: 'OPTIONS', preflight: true, newConnection: true, onPath: true },
        { method: 'POST', preflight: false, newConnection: false, onPath: true },
      ],
    },
    {
      name: 'the same after a preconnect: preflight + POST, 2 round trips',
      target: 'cross' as const,
      preconnect: true,
      roundTrips: 2,
      requests: [
        { method: 'OPTIONS', preflight: true, newConnection: false, onPath: true },
        { method: 'POST', preflight: false, newConnection: false, onPath: true },
      ],
    },
  ];

  for (const known of cases) {
    it(`${known.name}, and the slow link takes what it was priced at`, async () => {
      // A fresh profile on disk, as bench:signup's phone: an incognito context (Playwright's newContext) makes
      // no preconnect at all in Chromium (its loading predictor is off off-the-record).
      const profile = mkdtempSync(path.join(os.tmpdir(), 'goody-request-path-'));
      const context = await chromium.launchPersistentContext(profile, {
        executablePath: chromiumPath as string,
        args: chromiumArgs,
      });
      try {
        const priced = await press(context, direct, known.target, known);
        expect(shape(priced)).toEqual(known.requests);
        expect(priced.roundTrips).toBe(known.roundTrips);

        const slow = await press(context, delayed, known.target, known);
        // Through the forwarder the link's time is all in the measure (and what this run's own record would
        // price is beside the point). The loopback run's price must come out at it, within a few
        // milliseconds of noise and the bytes' transfer time, which the forwarder does not charge.
        expect(slow.measuredMs).toBeGreaterThanOrEqual(known.roundTrips * LINK.rttMs);
        expect(Math.abs(priced.pricedMs - slow.measuredMs)).toBeLessThan(40);
      } finally {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      }
    });
  }
});
