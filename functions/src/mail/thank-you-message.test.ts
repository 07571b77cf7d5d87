import { describe, expect, it } from 'vitest';
import { buildThankYouMessage, senderAddress, thankYouMessageToken } from './thank-you-message';

const VOID_ELEMENTS = new Set(['meta', 'br', 'img', 'hr', 'link', 'input']);

/** Every tag closed, in order, with nothing outside <html>: what "well-formed" means for a mail body. */
function unbalancedTags(html: string): string[] {
  const stack: string[] = [];
  const problems: string[] = [];
  for (const match of html.replace(/^<!DOCTYPE html>/, '').matchAll(/<(\/?)([a-z0-9]+)[^>]*>/gi)) {
    const [, closing, rawName] = match;
    const name = (rawName as string).toLowerCase();
    if (VOID_ELEMENTS.has(name)) continue;
    if (!closing) stack.push(name);
    else if (stack.pop() !== name) problems.push(`</${name}> closes the wrong element`);
  }
  return [...problems, ...stack.map((name) => `<${name}> is never closed`)];
}

const input = {
  to: 'kid@example.com',
  from: 'GOODY <hello@goody.example>',
  subscriptionType: 'updates' as const,
  recipientHash: 'a'.repeat(32),
  unsubscribeUrl: 'https://us-central1-goody.cloudfunctions.net/unsubscribe?a=c2VhbGVk&t=bWFj',
};

describe('the thank-you message', () => {
  it.each(['updates', 'club'] as const)('is well-formed HTML with a text twin (%s)', (subscriptionType) => {
    const message = buildThankYouMessage({ ...input, subscriptionType });
    expect(message.html).toMatch(/^<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">/);
    expect(message.html).toContain(`<title>${message.subject.replace("'", '&#39;')}</title>`);
    expect(unbalancedTags(message.html)).toEqual([]);
    expect(message.text).not.toMatch(/<[a-z]/i);
    // Same promises in both parts.
    for (const phrase of [
      'parent’s approval',
      'iOS and Android',
      'never sell or share your address',
      'The GOODY team',
    ]) {
      expect(message.text).toContain(phrase);
      expect(message.html).toContain(phrase);
    }
  });

  it('tracks nothing: no images, no scripts, no web links but the unsubscribe link and the mailto contact', () => {
    const { html } = buildThankYouMessage(input);
    expect(html).not.toMatch(/<img|<script|<link|<iframe|url\(/i);
    expect([...html.matchAll(/href="([^"]*)"/g)].map((match) => match[1])).toEqual([
      input.unsubscribeUrl.replaceAll('&', '&amp;'),
      'mailto:hello@goody.example',
    ]);
  });

  it('offers one-click unsubscribe to mail providers (RFC 8058), the https link only, and names its list', () => {
    const { headers, text } = buildThankYouMessage(input);
    // No mailto: nothing processes the MAIL_FROM inbox as an unsubscribe.
    expect(headers['List-Unsubscribe']).toBe(`<${input.unsubscribeUrl}>`);
    expect(headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
    expect(headers['List-Id']).toBe('GOODY pre-launch list <prelaunch.goody.example>');
    expect(text).toContain(`\n${input.unsubscribeUrl}\n`);
  });

  it('says plainly how to get off the list, in both parts', () => {
    const { text, html, replyTo } = buildThankYouMessage(input);
    expect(replyTo).toBe('hello@goody.example');
    expect(text).toContain(
      "Didn't sign up, or want off the list? Unsubscribe in one click, which deletes this address from our list:",
    );
    expect(text).toContain('Or reply to this e-mail or write to hello@goody.example');
    expect(html).toContain('want off the list? <a href="https://');
    expect(html).toContain('>Unsubscribe in one click</a>');
  });

  it('greets each form in its own words', () => {
    expect(buildThankYouMessage(input).subject).toBe("You're on the GOODY list 🎉");
    const club = buildThankYouMessage({ ...input, subscriptionType: 'club' });
    expect(club.subject).toBe('Welcome to the GOODY Club 🌟');
    expect(club.text).toContain('badges, style points and outfit challenges');
  });

  it('has a stable Message-ID per address, so a resend is recognisably the same message', () => {
    expect(buildThankYouMessage(input).messageId).toBe(`<thank-you.${'a'.repeat(32)}@goody.example>`);
    expect(buildThankYouMessage(input).messageId).toBe(buildThankYouMessage(input).messageId);
  });

  it('makes the Message-ID token from the mailbox key by its own derivation, stable per mailbox', () => {
    const key = 'NJxSvnvns4LfQ_62Hc4IIP3z0Td1kzWQf9RORd75Gss';
    const token = thankYouMessageToken(key);
    // Pinned: a resend after a deploy carries the Message-ID the first mail had.
    expect(token).toBe('LHf9UZvzdA8GuZbwvZwypLhgeHSd0v7X');
    expect(thankYouMessageToken(key)).toBe(token);
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(thankYouMessageToken(`${key.slice(0, -1)}A`)).not.toBe(token);
    // Nothing of the key in it: not its prefix (the record's name, the logs' handle), no run of 6 of its characters.
    for (let start = 0; start + 6 <= key.length; start += 1) {
      expect(token).not.toContain(key.slice(start, start + 6));
    }
    const { messageId } = buildThankYouMessage({ ...input, recipientHash: token });
    expect(messageId).toBe(`<thank-you.${token}@goody.example>`);
    expect(messageId).not.toContain(key.slice(0, 12));
    expect(() => thankYouMessageToken('')).toThrow(/mailbox key/);
  });

  it('escapes the contact address it shows', () => {
    const { html } = buildThankYouMessage({ ...input, from: 'GOODY <"x"&y@goody.example>' });
    expect(html).not.toContain('"x"&y');
    expect(unbalancedTags(html)).toEqual([]);
  });

  it('reads the bare address of a sender with a display name', () => {
    expect(senderAddress('GOODY <hello@goody.example>')).toBe('hello@goody.example');
    expect(senderAddress('hello@goody.example')).toBe('hello@goody.example');
  });
});
