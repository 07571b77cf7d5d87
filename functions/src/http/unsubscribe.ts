import '../global-options';
import { createHash } from 'node:crypto';
import { onRequest } from 'firebase-functions/v2/https';
import { systemClock } from '../clock';
import { cloudLogger, type Logger } from '../logs';
import { escapeHtml, senderAddress } from '../mail/thank-you-message';
import { MAIL_FROM, MAILBOX_KEY_SECRET, MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET } from '../params';
import { type ErasureReport, eraseAddress } from '../privacy/erasure';
import { erasureDepsFromParams } from '../privacy/finish-erasure';
import { emailFields } from '../privacy/log-fields';
import { openUnsubscribeToken } from '../privacy/unsubscribe-token';

export interface UnsubscribeHttpRequest {
  method: string;
  query: Record<string, unknown>;
  /** As Express parsed it: an object for a urlencoded form, else a string, a Buffer or nothing. */
  body?: unknown;
  /** The body as received (Cloud Functions keeps it), for multipart posts Express does not parse. */
  rawBody?: Buffer;
}

export type UnsubscribeHttpResponse = ReturnType<typeof page>;

export interface UnsubscribeDeps {
  secret: string;
  /** The address a person can write to instead: MAIL_FROM's. */
  contact: string;
  erase: (emailAsTyped: string) => Promise<Pick<ErasureReport, 'mailerLite'>>;
  logger: Logger;
  /** Counts each link's POSTs; beyond its limit a POST answers 429 and erases nothing. */
  limiter: LinkLimiter;
  now: () => number;
}

/** A link's POSTs allowed per window, in one instance: a person needs one, a mail provider one or two. */
export const LINK_POSTS_PER_WINDOW = 5;
export const LINK_WINDOW_MS = 60_000;

/**
 * A link's key: its MAC re-encoded, since four base64url strings decode to one 32-byte MAC. The MAC is of
 * the address alone, so every link of one address is one key.
 */
export function linkKey(t: string): string {
  return Buffer.from(t, 'base64url').toString('base64url');
}

/** One bucket for every token that does not open: a key per made-up string would push real links out. */
export const REFUSED_LINKS_KEY = 'refused tokens';
/** Refused tokens logged per window: beyond it a refusal answers 400 unlogged, so a flood costs nothing. */
export const REFUSED_LINKS_LOGGED_PER_WINDOW = 20;

/**
 * Each link's recent POSTs in the instance's memory (oldest forgotten first). A stranger gets a key only by a
 * thank-you mail, which the budget bounds; per instance, and a replay that gets through costs two reads.
 */
export class LinkLimiter {
  private readonly posts = new Map<string, number[]>();

  constructor(
    private readonly limit = LINK_POSTS_PER_WINDOW,
    private readonly windowMs = LINK_WINDOW_MS,
  ) {}

  get size(): number {
    return this.posts.size;
  }

  /** Counts a POST of this link; false, uncounted, when over the limit. */
  allow(link: string, now: number, limit = this.limit): boolean {
    const recent = (this.posts.get(link) ?? []).filter((time) => now - time < this.windowMs);
    const allowed = recent.length < limit;
    if (allowed) recent.push(now);
    this.posts.delete(link);
    this.posts.set(link, recent);
    // At most 10,000 links kept: the one least recently posted is forgotten first.
    if (this.posts.size > 10_000) this.posts.delete(this.posts.keys().next().value as string);
    return allowed;
  }
}

const STYLE = `
:root{color-scheme:light}
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;padding:24px 16px;background:#f6f4fb;color:#1f1d2b;font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;font-size:16px;line-height:1.5}
main{width:100%;max-width:480px;background:#fff;border-radius:16px;padding:32px}
.brand{margin:0 0 24px;font-size:22px;font-weight:800;letter-spacing:.5px;color:#6b2fd6}
h1{margin:0 0 16px;font-size:26px;line-height:1.25}
p{margin:0 0 16px}
a{color:#6b2fd6}
button{font:inherit;font-weight:700;color:#fff;background:#6b2fd6;border:0;border-radius:999px;padding:12px 28px;min-height:48px;cursor:pointer}
button:hover{background:#5a24bd}
button:focus-visible,a:focus-visible{outline:3px solid #1f1d2b;outline-offset:3px}
`.trim();

// The page's one inline style, allowed by its hash: no script, nothing else from anywhere.
const STYLE_HASH = createHash('sha256').update(STYLE, 'utf8').digest('base64');

const HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
  'X-Content-Type-Options': 'nosniff',
  // The link carries the token: it must not travel to another site as a referrer.
  'Referrer-Policy': 'no-referrer',
  'X-Robots-Tag': 'noindex, nofollow',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
};

function page(status: number, title: string, content: string, headers: Record<string, string> = {}) {
  const body = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)} · GOODY</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<p class="brand">GOODY</p>
<h1>${escapeHtml(title)}</h1>
${content}
</main>
</body>
</html>
`;
  return { status, headers: { ...HEADERS, ...headers }, body };
}

// No action: the form posts to this very URL, token included, with the body a mail provider sends.
const FORM = `<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`;

const TITLE = 'Unsubscribe from GOODY';

/** RFC 8058's body is 26 bytes as a form, a few hundred as multipart: larger is refused unread. */
export const ONE_CLICK_BODY_LIMIT_BYTES = 4 * 1024;

/** The RFC 8058 body, form or multipart, in one pass, no backtracking: a crafted body costs its length. */
export function isOneClick(request: Pick<UnsubscribeHttpRequest, 'body' | 'rawBody'>): boolean {
  const { body, rawBody } = request;
  if ((body as Record<string, unknown> | null | undefined)?.['List-Unsubscribe'] === 'One-Click') return true;
  const text = rawBody?.toString('utf8') ?? (Buffer.isBuffer(body) ? body.toString('utf8') : body);
  if (typeof text !== 'string' || Buffer.byteLength(text) > ONE_CLICK_BODY_LIMIT_BYTES) return false;
  if (text.trim().split('&').includes('List-Unsubscribe=One-Click')) return true;
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index += 1) {
    if (!/^content-disposition:.*\bname="List-Unsubscribe"/i.test(lines[index] ?? '')) continue;
    let value = index + 1;
    while (value < lines.length && lines[value] !== '') value += 1;
    if (lines[value + 1] === 'One-Click') return true;
    index = value;
  }
  return false;
}

/**
 * The thank-you's one-click unsubscribe. GET only shows the button (scanners prefetch links); POST (RFC 8058)
 * erases the address everywhere, MailerLite's part finished later if it fails. Only a failing database
 * answers 503; a link that does not open answers 400.
 */
export async function handleUnsubscribe(
  request: UnsubscribeHttpRequest,
  deps: UnsubscribeDeps,
): Promise<UnsubscribeHttpResponse> {
  const method = request.method.toUpperCase();
  if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
    return page(405, TITLE, '<p>Open the link from the e-mail.</p>', { Allow: 'GET, HEAD, POST' });
  }
  const c = escapeHtml(deps.contact);
  const token = openUnsubscribeToken(deps.secret, request.query.a, request.query.t);
  if (!token) {
    if (deps.limiter.allow(REFUSED_LINKS_KEY, deps.now(), REFUSED_LINKS_LOGGED_PER_WINDOW)) {
      deps.logger.warn('unsubscribe.refused_token', { method });
    }
    return page(
      400,
      'This link doesn’t work',
      `<p>This unsubscribe link is incomplete or was changed, so nothing was deleted. To leave the GOODY list, reply to the e-mail we sent you, or write to <a href="mailto:${c}">${c}</a>.</p>`,
    );
  }
  if (method !== 'POST') {
    return page(
      200,
      TITLE,
      `<p>Press the button to leave the GOODY list. We’ll delete this e-mail address from our sign-ups and from our mailing service, and won’t write to it again.</p>\n${FORM}`,
    );
  }
  const tooLarge = (request.rawBody?.length ?? 0) > ONE_CLICK_BODY_LIMIT_BYTES;
  if (tooLarge || !isOneClick(request)) {
    const reason = tooLarge ? 'body_too_large' : 'no_one_click_body';
    deps.logger.warn('unsubscribe.refused_token', { method, reason });
    return page(tooLarge ? 413 : 400, TITLE, `<p>Press the button to leave the GOODY list.</p>\n${FORM}`);
  }
  // The token opened, so `t` is a 43-character base64url string: keyed by the MAC it decodes to.
  if (!deps.limiter.allow(linkKey(String(request.query.t)), deps.now())) {
    deps.logger.warn('unsubscribe.rate_limited', emailFields(token.email));
    return page(
      429,
      TITLE,
      `<p>This link was used many times in the last minute. If you pressed the button before, you’re already unsubscribed; otherwise, please try again in a minute.</p>\n${FORM}`,
      { 'Retry-After': String(LINK_WINDOW_MS / 1000) },
    );
  }
  let erased: Pick<ErasureReport, 'mailerLite'>;
  try {
    erased = await deps.erase(token.emailAsTyped);
  } catch (error) {
    deps.logger.error('unsubscribe.failed', {
      ...emailFields(token.email),
      error: error instanceof Error ? error.name : 'unknown',
    });
    return page(
      503,
      'We couldn’t finish',
      `<p>Something went wrong on our side while deleting this address. Please try again in a few minutes.</p>\n${FORM}`,
    );
  }
  const deleted =
    erased.mailerLite === 'pending'
      ? 'We’ve deleted this e-mail address from the GOODY list. Our mailing service didn’t answer just now, so we’ll delete it there as soon as it does (we keep trying); you don’t need to do anything.'
      : 'We’ve deleted this e-mail address from the GOODY list and from our mailing service.';
  return page(
    200,
    'You’re unsubscribed',
    `<p>${deleted} You won’t hear from us again, even if this address is signed up again.</p>\n<p>Changed your mind? Write to <a href="mailto:${c}">${c}</a> and we’ll put you back on the list.</p>`,
  );
}

const limiter = new LinkLimiter();

export const unsubscribe = onRequest(
  // Public: mail providers and people call it without any Google identity.
  {
    secrets: [MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET, MAILBOX_KEY_SECRET],
    timeoutSeconds: 60,
    cors: false,
    invoker: 'public',
  },
  async (req, res) => {
    // The request as Express parsed it, `rawBody` kept by Cloud Functions.
    const response = await handleUnsubscribe(req, {
      secret: UNSUBSCRIBE_SECRET.value(),
      contact: senderAddress(MAIL_FROM.value() || 'hello@goody.invalid'),
      logger: cloudLogger,
      limiter,
      now: () => systemClock.now(),
      erase: async (email) => eraseAddress(email, await erasureDepsFromParams(40_000)),
    });
    res.status(response.status).set(response.headers).send(response.body);
  },
);
