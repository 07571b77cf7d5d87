// What a page's requests between two moments (the press and the success toast) cost on a real phone link,
// priced from a record of them made over the DevTools protocol on loopback.
//
// Why not Chrome's own network emulation: it holds each request's response until `latency` has passed since
// the request was sent, but it does not delay CORS preflights (the network service sends them outside the
// throttled transaction), and a loopback stack speaks plain HTTP, so a new connection costs no TLS
// hand-shake. A phone pays all of it. So the path is run on loopback with the CPU slowed (the page's own
// work, measured), every request on it recorded, and the link priced round trip by round trip:
//
//   - each request, preflights included, is one round trip;
//   - a request that opened its connection (its timing has a connect phase) pays what a new HTTPS connection
//     costs: 1 round trip for TCP and 1 for TLS 1.3 (`connectionRoundTrips`, 2). DNS is not priced: the
//     page's preconnects resolve the names on engagement, and a phone's resolver cache usually has them. A
//     request on a connection opened before it (a preconnect, an earlier request) pays none;
//   - the bytes each way at the link's rates (request line, headers and body up, what the response took down);
//   - requests that overlap run side by side: only the longest chain of requests of which each started after
//     the one before it had finished counts (a preflight and its request are one link of the chain, the
//     request waits for its preflight). That chain is the path's sequential round trips.
//
//   priced = the page's own time: measured press -> toast (CPU slowed, loopback)
//                                 - what the chain's requests took there (loopback trips, emulators' work)
//          + the link's:          the chain's round trips x RTT + its bytes' transfer time
//
// The local requests are taken out whole: besides the loopback trip (well under 1 ms) they hold the
// emulators' own work, which on a busy 2-core machine is tens to hundreds of milliseconds and nothing like a
// deployed service's; the price leaves the servers' time out (a deployed service's comes on top, for any
// build alike) and so compares pages and paths, not emulators. Main-thread work done while a request was in
// flight falls inside that request's local time, and is then counted as hidden behind its round trip, as it
// is on a real link (as long as it is shorter than one). Where it may charge too much: an HTTP/1.1 connection
// the loopback stack opens for a request that ran beside another would be multiplexed on the HTTP/2
// connection a real Google front end keeps (it is printed as a new connection: look at the path).
import type { CDPSession } from 'playwright-core';

export interface Link {
  rttMs: number;
  downloadKbps: number;
  uploadKbps: number;
  /** Round trips to open a connection before its first request: TCP (1) + TLS 1.3 (1). */
  connectionRoundTrips: number;
}

/** A mid-range phone on a mobile link, as Lighthouse's mobile profile models it; HTTPS with TLS 1.3. */
export const PHONE_LINK: Link = { rttMs: 150, downloadKbps: 1_600, uploadKbps: 750, connectionRoundTrips: 2 };

/** One request as the browser's network stack saw it. Times are epoch milliseconds. */
export interface RecordedRequest {
  id: string;
  method: string;
  url: string;
  /** DevTools' resource type of the response (Fetch, Script, Preflight, …), else of the request. */
  type: string;
  /** For a CORS preflight: the id of the request it was sent for. */
  preflightFor?: string;
  /** When the page asked for it. */
  startedAt: number;
  /** When the network stack started it: for a request behind a preflight, once the preflight had answered. */
  sentAt?: number;
  /** When it had finished loading, or failed. */
  finishedAt?: number;
  failed?: string;
  status?: number;
  connectionId?: number;
  connectionReused?: boolean;
  /** How long it spent opening a connection itself (DNS, connect, TLS); undefined when it used an open one. */
  localConnectMs?: number;
  /** Answered from a cache: no network. */
  fromCache: boolean;
  uploadBytes: number;
  downloadBytes: number;
}

interface TimingPhases {
  requestTime: number;
  dnsStart: number;
  connectStart: number;
  connectEnd: number;
  sslEnd: number;
}

type Headers = Record<string, string>;
const headerBytes = (headers: Headers | undefined) =>
  Object.entries(headers ?? {}).reduce((sum, [name, value]) => sum + name.length + value.length + 4, 0);

/**
 * Records every request a page's target makes, from now on. Chromium 156 reports a CORS preflight as a
 * request of its own whose initiator is `{ type: 'preflight', requestId: <the request it is for> }` (its
 * response has type `Preflight`); the request itself is announced first and sent once the preflight has
 * answered.
 */
export class RequestRecorder {
  private readonly byId = new Map<string, RecordedRequest>();
  private readonly done: RecordedRequest[] = [];
  /** Bytes of each request's headers as sent (requestWillBeSentExtraInfo, which may come first), by id. */
  private readonly sentHeaders = new Map<string, number>();
  /** The request line, the page's own headers and the body, by id: the upload's size until the sent headers are known. */
  private readonly pageBytes = new Map<string, { line: number; headers: number; body: number }>();
  /** Epoch ms minus the protocol's monotonic ms, from the first request seen. */
  private offsetMs: number | undefined;

  static async attach(cdp: CDPSession): Promise<RequestRecorder> {
    const recorder = new RequestRecorder(cdp);
    await cdp.send('Network.enable');
    return recorder;
  }

  private constructor(cdp: CDPSession) {
    cdp.on('Network.requestWillBeSent', (event) => {
      this.offsetMs ??= event.wallTime * 1000 - event.timestamp * 1000;
      const previous = this.byId.get(event.requestId);
      if (previous && event.redirectResponse) {
        // A redirect: the hop that was answered is a request of its own.
        this.byId.delete(event.requestId);
        previous.id = `${event.requestId}:${this.done.length}`;
        previous.status = event.redirectResponse.status;
        previous.finishedAt = this.epoch(event.timestamp);
        const page = this.pageBytes.get(event.requestId);
        if (page) previous.uploadBytes = page.line + page.headers + page.body;
        this.done.push(previous);
      }
      const { request, initiator } = event;
      const body = (request.postDataEntries ?? []).reduce(
        (sum, entry) => sum + (entry.bytes ? Buffer.from(entry.bytes, 'base64').length : 0),
        0,
      );
      this.byId.set(event.requestId, {
        id: event.requestId,
        method: request.method,
        url: request.url,
        type: event.type ?? 'Other',
        preflightFor: initiator.type === 'preflight' ? initiator.requestId : undefined,
        startedAt: this.epoch(event.timestamp),
        fromCache: false,
        uploadBytes: 0,
        downloadBytes: 0,
      });
      this.pageBytes.set(event.requestId, {
        line: request.method.length + request.url.length + 12,
        headers: headerBytes(request.headers),
        body,
      });
    });
    cdp.on('Network.requestWillBeSentExtraInfo', (event) => {
      // The headers really sent (cookies and all): replaces the page's own list in the upload's size.
      this.sentHeaders.set(event.requestId, headerBytes(event.headers));
    });
    cdp.on('Network.requestServedFromCache', (event) => {
      const request = this.byId.get(event.requestId);
      if (request) request.fromCache = true;
    });
    cdp.on('Network.responseReceived', (event) => {
      const request = this.byId.get(event.requestId);
      if (!request) return;
      const { response } = event;
      request.type = event.type;
      request.status = response.status;
      request.connectionId = response.connectionId;
      request.connectionReused = response.connectionReused;
      if (response.fromDiskCache || response.fromPrefetchCache || response.fromServiceWorker)
        request.fromCache = true;
      request.downloadBytes = Math.max(request.downloadBytes, response.encodedDataLength);
      const timing = response.timing as TimingPhases | undefined;
      if (timing) request.sentAt = this.epoch(timing.requestTime);
      if (timing && timing.connectStart >= 0) {
        const from = timing.dnsStart >= 0 ? timing.dnsStart : timing.connectStart;
        request.localConnectMs = Math.max(timing.connectEnd, timing.sslEnd) - from;
      }
    });
    cdp.on('Network.loadingFinished', (event) => {
      const request = this.byId.get(event.requestId);
      if (!request) return;
      request.finishedAt = this.epoch(event.timestamp);
      request.downloadBytes = Math.max(request.downloadBytes, event.encodedDataLength);
      this.finish(event.requestId, request);
    });
    cdp.on('Network.loadingFailed', (event) => {
      const request = this.byId.get(event.requestId);
      if (!request) return;
      request.finishedAt = this.epoch(event.timestamp);
      request.failed = event.blockedReason ?? event.corsErrorStatus?.corsError ?? event.errorText;
      this.finish(event.requestId, request);
    });
  }

  private epoch(monotonicSeconds: number): number {
    return monotonicSeconds * 1000 + (this.offsetMs ?? 0);
  }

  private finish(id: string, request: RecordedRequest): void {
    const page = this.pageBytes.get(id);
    if (page) request.uploadBytes = page.line + (this.sentHeaders.get(id) ?? page.headers) + page.body;
    this.sentHeaders.delete(id);
    this.pageBytes.delete(id);
    this.byId.delete(id);
    this.done.push(request);
  }

  /**
   * Waits until every request asked for by `until` (epoch ms: the toast) has finished or failed as DevTools
   * reports it, or `timeoutMs` passed. The page can read a response to its end a moment before the browser's
   * network service reports it finished (Network.loadingFinished): a record taken at the toast could hold
   * the press's last request unfinished, and the price would leave it out.
   */
  async settled(until: number, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const unfinished = () => [...this.byId.values()].some((request) => request.startedAt <= until);
    while (unfinished() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  /** Every request seen so far, finished or not, in the order they were asked for. */
  requests(): RecordedRequest[] {
    return [...this.done, ...this.byId.values()].sort((a, b) => a.startedAt - b.startedAt);
  }
}

/** One request of the path, priced. */
export interface PricedRequest {
  request: RecordedRequest;
  preflight: boolean;
  newConnection: boolean;
  /** Round trips on the link: 1, plus the connection's when it opened one; 0 from a cache or without an answer. */
  roundTrips: number;
  transferMs: number;
  /** What it took on loopback, from when it was sent to when it had loaded. */
  localMs: number;
  /** Started before the press (and finished after it). */
  inFlightAtPress: boolean;
  /** Part of the chain of sequential round trips that the price counts. */
  onPath: boolean;
}

export interface PricedPath {
  link: Link;
  /** The page's own measure of press -> toast, on loopback with the CPU slowed. */
  measuredMs: number;
  /** Every request that finished between the press and the toast, in the order they were sent. */
  requests: PricedRequest[];
  /**
   * What the chain's requests took on loopback (each link from when the page asked to when it had loaded, a
   * preflight and its request together): the local round trips and the local servers' work, taken out of
   * the measured time. The rest of it, `pageMs`, is the page's own.
   */
  localOnPathMs: number;
  pageMs: number;
  /** The chain's round trips, preflights and new connections. */
  roundTrips: number;
  preflights: number;
  newConnections: number;
  /** What the link charges for the chain: round trips x RTT + the bytes' transfer. */
  linkMs: number;
  /** pageMs + linkMs. */
  pricedMs: number;
}

/** The link's charge for one request's bytes: up at the upload rate, down at the download rate. */
function transferMs(request: RecordedRequest, link: Link): number {
  // kbit/s is bits per millisecond.
  return (request.uploadBytes * 8) / link.uploadKbps + (request.downloadBytes * 8) / link.downloadKbps;
}

/**
 * Prices the requests of one press -> toast window (`pressAt`, `toastAt`: epoch ms; `measuredMs`: the page's
 * own measure of that window) on `link`. Only requests that had finished by the toast can have held it.
 */
/**
 * How far the two clocks a window is read on may disagree: the page's press and toast are its own epoch time
 * (performance.timeOrigin + now()), a request's times DevTools' monotonic clock turned into epoch time by one
 * sample (RequestRecorder). On loopback the press's last response can end within a millisecond of the toast,
 * and was seen to end 0.3 ms after it by these clocks; a request that really ended after the toast ends
 * later than this.
 */
export const CLOCKS_DISAGREE_MS = 5;

export function pricePath(
  recorded: readonly RecordedRequest[],
  window: { pressAt: number; toastAt: number; measuredMs: number },
  link: Link,
): PricedPath {
  const sentAt = (request: RecordedRequest) => request.sentAt ?? request.startedAt;
  const inWindow = [...recorded]
    .sort((a, b) => sentAt(a) - sentAt(b))
    .filter(
      (request) =>
        /^https?:/.test(request.url) &&
        request.finishedAt !== undefined &&
        request.finishedAt > window.pressAt &&
        request.finishedAt <= window.toastAt + CLOCKS_DISAGREE_MS,
    );
  const priced: PricedRequest[] = inWindow.map((request) => {
    const answered = request.status !== undefined;
    const networked = answered && !request.fromCache;
    const newConnection = networked && request.localConnectMs !== undefined;
    return {
      request,
      preflight: request.preflightFor !== undefined,
      newConnection,
      roundTrips: networked ? 1 + (newConnection ? link.connectionRoundTrips : 0) : 0,
      transferMs: networked ? transferMs(request, link) : 0,
      localMs: (request.finishedAt as number) - sentAt(request),
      inFlightAtPress: request.startedAt < window.pressAt,
      onPath: false,
    };
  });

  // A preflight and the request it was sent for are one link of the chain.
  const links = new Map<string, PricedRequest[]>();
  for (const item of priced) {
    const key = item.request.preflightFor ?? item.request.id;
    links.set(key, [...(links.get(key) ?? []), item]);
  }
  const chainLinks = [...links.values()]
    .map((members) => ({
      members,
      start: Math.min(...members.map((m) => m.request.startedAt)),
      end: Math.max(...members.map((m) => m.request.finishedAt as number)),
      linkMs: members.reduce((sum, m) => sum + m.roundTrips * link.rttMs + m.transferMs, 0),
    }))
    .sort((a, b) => a.end - b.end);

  // The dearest chain of links each asked for after the one before it had finished (weighted interval
  // scheduling: best[i] is the dearest chain ending with link i).
  const best: Array<{ linkMs: number; previous: number }> = [];
  chainLinks.forEach((current, index) => {
    let previous = -1;
    let before = 0;
    for (let earlier = 0; earlier < index; earlier += 1) {
      const candidate = chainLinks[earlier] as (typeof chainLinks)[number];
      const value = (best[earlier] as { linkMs: number }).linkMs;
      if (candidate.end <= current.start && value > before) {
        before = value;
        previous = earlier;
      }
    }
    best.push({ linkMs: before + current.linkMs, previous });
  });
  let last = -1;
  best.forEach((entry, index) => {
    if (last < 0 || entry.linkMs > (best[last] as { linkMs: number }).linkMs) last = index;
  });
  let localOnPathMs = 0;
  for (let at = last; at >= 0; at = (best[at] as { previous: number }).previous) {
    const chainLink = chainLinks[at] as (typeof chainLinks)[number];
    // Only what fell inside the measured window: a request in flight at the press counts from the press.
    localOnPathMs += chainLink.end - Math.max(chainLink.start, window.pressAt);
    for (const member of chainLink.members) member.onPath = true;
  }

  const onPath = priced.filter((item) => item.onPath);
  const linkMs = last < 0 ? 0 : (best[last] as { linkMs: number }).linkMs;
  const pageMs = window.measuredMs - localOnPathMs;
  return {
    link,
    measuredMs: window.measuredMs,
    requests: priced,
    localOnPathMs,
    pageMs,
    roundTrips: onPath.reduce((sum, item) => sum + item.roundTrips, 0),
    preflights: onPath.filter((item) => item.preflight).length,
    newConnections: onPath.filter((item) => item.newConnection).length,
    linkMs,
    pricedMs: pageMs + linkMs,
  };
}

/** Who answers a URL, in a word, where it is one of the sign-up's. */
function labelOf(url: URL): string {
  if (url.hostname === 'content-firebaseappcheck.googleapis.com' || /:exchange\w*Token$/.test(url.pathname))
    return 'App Check';
  if (/\/documents:(batchGet|commit|runQuery)$/.test(url.pathname) || url.pathname.includes('/documents/'))
    return 'Firestore';
  if (url.hostname.endsWith('recaptcha.net') || url.pathname.startsWith('/recaptcha/')) return 'reCAPTCHA';
  return '';
}

/** A signature of the chain (method and path of each request, in order), to tell two runs' paths apart. */
export function pathSignature(path: PricedPath): string {
  return path.requests
    .filter((item) => item.onPath)
    .map(
      (item) =>
        `${item.request.method} ${new URL(item.request.url).pathname}${item.newConnection ? ' +conn' : ''}`,
    )
    .join(' | ');
}

/** The path as lines: each request, preflight or not, new connection or not, and the sum. */
export function formatPath(path: PricedPath, indent = '    '): string[] {
  const origins = new Map<string, string>();
  const lines = path.requests.map((item) => {
    const url = new URL(item.request.url);
    if (!origins.has(url.origin)) origins.set(url.origin, String.fromCharCode(65 + origins.size));
    const where = `${origins.get(url.origin)} ${url.pathname}`;
    const flags = [
      item.preflight ? 'preflight' : '',
      item.newConnection ? `new connection (+${path.link.connectionRoundTrips} RT)` : '',
      item.request.fromCache ? 'from cache' : '',
      item.request.failed ? `failed: ${item.request.failed}` : '',
      item.inFlightAtPress ? 'in flight at the press' : '',
      item.onPath ? '' : 'beside the path (not counted)',
    ]
      .filter(Boolean)
      .join(', ');
    const label = labelOf(url);
    return (
      `${indent}${item.onPath ? `${item.roundTrips} RT` : '    '}  ${item.request.method.padEnd(7)} ` +
      `${where.length > 84 ? `${where.slice(0, 81)}...` : where}${label ? ` [${label}]` : ''}` +
      `  (${item.request.type}, local ${Math.round(item.localMs)} ms${flags ? `; ${flags}` : ''})`
    );
  });
  return [
    ...lines,
    ...[...origins].map(([origin, letter]) => `${indent}${letter} = ${origin}`),
    `${indent}${path.roundTrips} sequential round trips (${path.preflights} preflights, ${path.newConnections} new ` +
      `connections) x ${path.link.rttMs} ms + transfer = ${Math.round(path.linkMs)} ms on the link, + the page's ` +
      `own ${Math.round(path.pageMs)} ms (measured ${Math.round(path.measuredMs)} ms - ` +
      `${Math.round(path.localOnPathMs)} ms in the local requests) = priced ${Math.round(path.pricedMs)} ms`,
  ];
}
