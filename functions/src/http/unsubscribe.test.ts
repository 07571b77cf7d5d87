// The unsubscribe endpoint's limiter, on its own: what a link is keyed by, and what a refused token costs.
// The erasure is a stand-in that counts its calls (the endpoint against Firestore and MailerLite:
// privacy/erasure.test.ts).

import { beforeEach, describe, expect, it } from 'vitest';
import { type RecordingLogger, recordingLogger } from '../../test-support/logs';
import { UNSUBSCRIBE_SECRET } from '../../test-support/signups';
import { callUnsubscribe, type UnsubscribeRequest } from '../../test-support/unsubscribe';
import { unsubscribeToken } from '../privacy/unsubscribe-token';
import {
  LINK_POSTS_PER_WINDOW,
  LinkLimiter,
  linkKey,
  REFUSED_LINKS_KEY,
  REFUSED_LINKS_LOGGED_PER_WINDOW,
} from './unsubscribe';

const ONE_CLICK = { 'List-Unsubscribe': 'One-Click' };
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

let logger: RecordingLogger;
let limiter: LinkLimiter;
let erased: string[];

beforeEach(() => {
  logger = recordingLogger();
  limiter = new LinkLimiter();
  erased = [];
});

function unsubscribe(request: UnsubscribeRequest) {
  return callUnsubscribe(request, {
    logger,
    limiter,
    now: () => 1_000_000,
    erase: async (email) => {
      erased.push(email);
      return { mailerLite: 'forgotten' };
    },
  });
}

/**
 * The four spellings of a 43-character base64url MAC: its last character carries four bits of the MAC
 * and two the decoder ignores, so these four strings decode to the same 32 bytes.
 */
function spellingsOf(t: string): string[] {
  const last = BASE64URL.indexOf(t.slice(-1));
  const base = last - (last % 4);
  return [0, 1, 2, 3].map((bits) => `${t.slice(0, -1)}${BASE64URL[base + bits]}`);
}

describe('the link limiter', () => {
  it('counts the four base64url spellings of one token as one link', async () => {
    const token = unsubscribeToken(UNSUBSCRIBE_SECRET, 'kid@example.com');
    const spellings = spellingsOf(token.t);
    expect(new Set(spellings).size).toBe(4);
    expect(new Set(spellings.map(linkKey))).toEqual(new Set([linkKey(token.t)]));

    const statuses: number[] = [];
    for (let i = 0; i < LINK_POSTS_PER_WINDOW + 3; i += 1) {
      const query = { a: token.a, t: spellings[i % 4] };
      statuses.push((await unsubscribe({ method: 'POST', query, body: ONE_CLICK })).status);
    }
    // Every spelling opens (the first four POSTs are one of each), and together they get one link's limit.
    expect(statuses).toEqual([...Array.from({ length: LINK_POSTS_PER_WINDOW }, () => 200), 429, 429, 429]);
    expect(erased).toHaveLength(LINK_POSTS_PER_WINDOW);
    expect(limiter.size).toBe(1);
  });

  it('counts two links made for one address as one: the key is the MAC of the address, not the seal', async () => {
    const first = unsubscribeToken(UNSUBSCRIBE_SECRET, 'kid@example.com');
    const second = unsubscribeToken(UNSUBSCRIBE_SECRET, 'kid@example.com');
    expect(second.a).not.toBe(first.a);
    const statuses: number[] = [];
    for (let i = 0; i < LINK_POSTS_PER_WINDOW + 1; i += 1) {
      const query = { ...(i % 2 === 0 ? first : second) };
      statuses.push((await unsubscribe({ method: 'POST', query, body: ONE_CLICK })).status);
    }
    expect(statuses.at(-1)).toBe(429);
    // Another address is another link.
    const friend = { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'friend@example.com') };
    expect((await unsubscribe({ method: 'POST', query: friend, body: ONE_CLICK })).status).toBe(200);
  });

  it('counts refused tokens in one bucket: a flood of made-up links neither grows it nor frees a replayed link', async () => {
    const kid = { ...unsubscribeToken(UNSUBSCRIBE_SECRET, 'kid@example.com') };
    for (let i = 0; i < LINK_POSTS_PER_WINDOW; i += 1) {
      expect((await unsubscribe({ method: 'POST', query: kid, body: ONE_CLICK })).status).toBe(200);
    }
    // 12,000 tokens that do not open, each a different string: more than the 10,000 links the limiter keeps.
    for (let i = 0; i < 12_000; i += 1) {
      const query = { a: `${kid.a.slice(0, -6)}${String(i).padStart(6, '0')}`, t: kid.t };
      const method = i % 2 === 0 ? 'POST' : 'GET';
      expect((await unsubscribe({ method, query, body: ONE_CLICK })).status).toBe(400);
    }
    expect(limiter.size).toBe(2);
    // kid's count was not pushed out by them: the replay is still held back, and nothing more was erased.
    expect((await unsubscribe({ method: 'POST', query: kid, body: ONE_CLICK })).status).toBe(429);
    expect(erased).toHaveLength(LINK_POSTS_PER_WINDOW);
    // Each refusal answered 400; only the window's first few wrote a log line.
    const refusals = logger.entries.filter((entry) => entry.event === 'unsubscribe.refused_token');
    expect(refusals).toHaveLength(REFUSED_LINKS_LOGGED_PER_WINDOW);
  });

  it('logs refused tokens again once the window has passed', () => {
    const limiter = new LinkLimiter();
    for (let i = 0; i < REFUSED_LINKS_LOGGED_PER_WINDOW; i += 1) {
      expect(limiter.allow(REFUSED_LINKS_KEY, i, REFUSED_LINKS_LOGGED_PER_WINDOW)).toBe(true);
    }
    expect(limiter.allow(REFUSED_LINKS_KEY, 100, REFUSED_LINKS_LOGGED_PER_WINDOW)).toBe(false);
    expect(limiter.allow(REFUSED_LINKS_KEY, 60_000, REFUSED_LINKS_LOGGED_PER_WINDOW)).toBe(true);
    // A link's own limit is not the refused tokens' one.
    expect(limiter.allow('t', 0)).toBe(true);
  });
});
