import { describe, expect, it } from 'vitest';
import { openUnsubscribeToken, unsubscribeLink, unsubscribeToken } from './unsubscribe-token';

const SECRET = 'a-test-secret-of-some-length';

describe('the unsubscribe token', () => {
  it('opens to the address it was made for, as typed and normalised', () => {
    const { a, t } = unsubscribeToken(SECRET, ' Kid.Teen@Example.com ');
    expect(openUnsubscribeToken(SECRET, a, t)).toEqual({
      emailAsTyped: 'Kid.Teen@Example.com',
      email: 'kid.teen@example.com',
    });
  });

  it('shows no part of the address, and differs per mail', () => {
    const link = unsubscribeLink('https://example.test/unsubscribe', SECRET, 'kid.teen@example.com');
    expect(link).toMatch(/^https:\/\/example\.test\/unsubscribe\?a=[A-Za-z0-9_-]+&t=[A-Za-z0-9_-]{43}$/);
    // "@" and "." are not base64url characters: no chance match.
    expect(new URL(link).search).not.toMatch(/@|kid\.teen|example\.com/i);
    expect(unsubscribeToken(SECRET, 'kid@example.com').a).not.toBe(
      unsubscribeToken(SECRET, 'kid@example.com').a,
    );
  });

  it('opens to nothing under another secret, or when either half is changed', () => {
    const { a, t } = unsubscribeToken(SECRET, 'kid@example.com');
    const other = unsubscribeToken(SECRET, 'friend@example.com');
    expect(openUnsubscribeToken('another-secret', a, t)).toBeNull();
    expect(openUnsubscribeToken(SECRET, a, other.t)).toBeNull();
    expect(openUnsubscribeToken(SECRET, other.a, t)).toBeNull();
    expect(openUnsubscribeToken(SECRET, `${a}A`, t)).toBeNull();
    expect(openUnsubscribeToken(SECRET, a, `${t.slice(0, -1)}${t.endsWith('A') ? 'B' : 'A'}`)).toBeNull();
    expect(openUnsubscribeToken(SECRET, a.slice(0, 20), t)).toBeNull();
    expect(openUnsubscribeToken(SECRET, undefined, t)).toBeNull();
    expect(openUnsubscribeToken('', a, t)).toBeNull();
  });

  it('refuses to make a token without a secret', () => {
    expect(() => unsubscribeToken('', 'kid@example.com')).toThrow(/UNSUBSCRIBE_SECRET/);
  });
});
