import { HttpsError } from 'firebase-functions/v2/https';
import { describe, expect, it } from 'vitest';
import { BAD_EMAILS } from '../test-support/callables';
import { EMAIL_MAX_LENGTH, emailProblem, normaliseEmail } from './contract';
import { parseAddContactInput, parseSyncInput, parseThankYouInput } from './schemas';

function refusal(parse: () => unknown): HttpsError {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(HttpsError);
    expect((error as HttpsError).code).toBe('invalid-argument');
    return error as HttpsError;
  }
  throw new Error('expected the input to be refused');
}

describe('e-mail addresses', () => {
  it.each([
    'kid@example.com',
    'Kid.Teen+goody@Example.COM',
    "o'brien@example.co.uk",
    'parent_1@sub.domain.example',
    'kid@xn--bcher-kva.example',
    `${'a'.repeat(64)}@example.com`,
  ])('accepts %s', (email) => {
    expect(emailProblem(email)).toBeNull();
  });

  it('accepts an address of exactly 254 characters and refuses 255', () => {
    const domain = (length: number) =>
      `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(length - 63 - 63 - 6)}.com`;
    const at254 = `${'a'.repeat(64)}@${domain(189)}`;
    expect(at254).toHaveLength(EMAIL_MAX_LENGTH);
    expect(emailProblem(at254)).toBeNull();
    expect(emailProblem(`${'a'.repeat(64)}@${domain(190)}`)).toBe('length');
  });

  it.each(BAD_EMAILS)('refuses %s', (_, email) => {
    expect(emailProblem(email)).not.toBeNull();
  });

  it('says why, so the message can name the problem', () => {
    expect(emailProblem(7)).toBe('type');
    expect(emailProblem('x'.repeat(255))).toBe('length');
    expect(emailProblem('kid@example.com\r\n')).toBe('control');
    expect(emailProblem('élève@example.com')).toBe('unicode');
    expect(emailProblem('kid@localhost')).toBe('format');
    expect(emailProblem(`${'a'.repeat(65)}@example.com`)).toBe('format');
  });

  it('normalises by trimming and lower-casing', () => {
    expect(normaliseEmail('  Kid.Teen@Example.COM ')).toBe('kid.teen@example.com');
  });
});

describe('add-contact-to-mailerlite input', () => {
  it('takes the hero form body (no type) as an "updates" sign-up', () => {
    expect(parseAddContactInput({ email: ' Kid@Example.com', source: 'hero_form' })).toEqual({
      email: 'kid@example.com',
      emailAsSent: 'Kid@Example.com',
      source: 'hero_form',
      subscriptionType: 'updates',
    });
  });

  it('takes the final form body as a "club" sign-up', () => {
    expect(
      parseAddContactInput({ email: 'kid@example.com', source: 'final_cta', subscription_type: 'club' }),
    ).toEqual({
      email: 'kid@example.com',
      emailAsSent: 'kid@example.com',
      source: 'final_cta',
      subscriptionType: 'club',
    });
  });

  it.each<[string, unknown, RegExp]>([
    ['no body', undefined, /must be an object/],
    ['null', null, /must be an object/],
    ['a string', 'kid@example.com', /must be an object/],
    ['an array', [{ email: 'kid@example.com', source: 'hero_form' }], /not an array/],
    ['no email', { source: 'hero_form' }, /^email is required/],
    ['no source', { email: 'kid@example.com' }, /^source is required/],
    ['a numeric email', { email: 5, source: 'hero_form' }, /^email must be a string/],
    [
      'an unknown source',
      { email: 'kid@example.com', source: 'popup' },
      /^source must be one of hero_form, final_cta/,
    ],
    ['a source object', { email: 'kid@example.com', source: { $ne: 1 } }, /^source must be a string/],
    [
      'an unknown type',
      { email: 'kid@example.com', source: 'hero_form', subscription_type: 'vip' },
      /^subscription_type must be one of updates, club/,
    ],
    [
      'a null type',
      { email: 'kid@example.com', source: 'hero_form', subscription_type: null },
      /^subscription_type must be a string/,
    ],
    [
      'a type that does not go with the source',
      { email: 'kid@example.com', source: 'hero_form', subscription_type: 'club' },
      /club does not go with source hero_form/,
    ],
    [
      'the final form without its type',
      { email: 'kid@example.com', source: 'final_cta' },
      /subscription_type is required/,
    ],
    [
      'an extra field',
      { email: 'kid@example.com', source: 'hero_form', admin: true },
      /Unexpected field "admin"/,
    ],
    [
      'an extra field with a 10 kB name',
      { email: 'kid@example.com', source: 'hero_form', ['x'.repeat(10_240)]: 1 },
      /Unexpected field "x{40}\.\.\."/,
    ],
  ])('refuses %s with a message naming the field', (_, body, message) => {
    expect(refusal(() => parseAddContactInput(body)).message).toMatch(message);
  });

  it.each(BAD_EMAILS)('refuses an email that is %s', (_, email) => {
    expect(refusal(() => parseAddContactInput({ email, source: 'hero_form' })).message).toMatch(/^email /);
  });

  it('never echoes control characters back in a message', () => {
    const message = refusal(() =>
      parseAddContactInput({ email: 'a@b.co', source: 'hero_form', 'x\ny': 1 }),
    ).message;
    expect(message).toBe('Unexpected field "x?y".');
  });
});

describe('send-thank-you-email input', () => {
  it('keeps the address as sent (to find the stored sign-up) and its normalised form', () => {
    expect(parseThankYouInput({ email: ' Kid@Example.com ' })).toEqual({
      email: 'kid@example.com',
      emailAsSent: 'Kid@Example.com',
    });
  });

  it.each(BAD_EMAILS)('refuses an email that is %s', (_, email) => {
    expect(refusal(() => parseThankYouInput({ email })).message).toMatch(/^email /);
  });

  it.each<[string, unknown]>([
    ['no body', undefined],
    ['an array', ['kid@example.com']],
    ['an extra field', { email: 'kid@example.com', source: 'hero_form' }],
  ])('refuses %s', (_, body) => {
    refusal(() => parseThankYouInput(body));
  });
});

describe('sync-emails-to-mailerlite input', () => {
  it.each([undefined, null, {}])('takes an empty body (%j)', (body) => {
    expect(() => parseSyncInput(body)).not.toThrow();
  });

  it.each<[string, unknown]>([
    ['a string', 'go'],
    ['a number', 1],
    ['an array', []],
    ['an object with fields', { limit: 10 }],
    ['a 10 kB string', 'x'.repeat(10_240)],
  ])('refuses %s', (_, body) => {
    expect(refusal(() => parseSyncInput(body)).message).toMatch(/takes no arguments/);
  });
});
