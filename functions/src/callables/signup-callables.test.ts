// The two callables the page makes after its insert: they check the body and answer, nothing else (no
// database, no task, no MailerLite, no mail), so every well-formed call does the same work and gets the same
// reply, and no call can take, delay or steer a person's delivery: the stored row's trigger makes that work
// (delivery/index-signup.ts; tested beside it and beside the workers, src/delivery/). The stack suite counts
// the tasks a thousand guesses make at the Cloud Tasks emulator: none (tests/stack/delivery.test.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BAD_EMAILS, expectHttpsError } from '../../test-support/callables';
import { type RecordingLogger, recordingLogger } from '../../test-support/logs';
import { handleAddContactToMailerlite, handleSendThankYouEmail } from './signup-callables';

function setup() {
  const logger: RecordingLogger = recordingLogger();
  return { logger, deps: { logger } };
}

describe('add-contact-to-mailerlite', () => {
  it('answers accepted to a well-formed body', async () => {
    const { deps } = setup();
    expect(
      await handleAddContactToMailerlite(
        { email: ' Kid@Example.com ', source: 'final_cta', subscription_type: 'club' },
        deps,
      ),
    ).toEqual({ status: 'accepted' });
  });

  it('makes no work: its module reaches neither the task queues, the database nor MailerLite', () => {
    const source = readFileSync(new URL('./signup-callables.ts', import.meta.url), 'utf8');
    const imports = [...source.matchAll(/from '([^']+)'/g)].map((match) => match[1]);
    expect(
      imports.filter((path) => /tasks|firestore|mailerlite\/|mail\/|privacy|signups/.test(path ?? '')),
    ).toEqual([]);
  });

  it('answers byte for byte the same for any well-formed address, and logs nothing about it', async () => {
    const { deps, logger } = setup();
    const replies = await Promise.all(
      ['stored@example.com', 'stranger@example.com', 'erased@example.com', 'thanked@example.com'].map(
        async (email) =>
          JSON.stringify(await handleAddContactToMailerlite({ email, source: 'hero_form' }, deps)),
      ),
    );
    expect(new Set(replies)).toEqual(new Set(['{"status":"accepted"}']));
    expect(logger.entries).toEqual([]);
  });

  describe('refuses bad input with a clear message', () => {
    it.each(BAD_EMAILS)('an email that is %s', async (_, email) => {
      const { deps, logger } = setup();
      await expectHttpsError(
        handleAddContactToMailerlite({ email, source: 'hero_form' }, deps),
        'invalid-argument',
      );
      expect(logger.entries).toEqual([
        { severity: 'warn', event: 'input.rejected', fields: { callable: 'add-contact-to-mailerlite' } },
      ]);
    });

    it.each<[string, unknown, RegExp]>([
      ['no body', undefined, /email and source/],
      ['null', null, /email and source/],
      ['an array', [{ email: 'kid@example.com', source: 'hero_form' }], /email and source/],
      ['a string', 'kid@example.com', /email and source/],
      ['no email', { source: 'hero_form' }, /email is required/],
      ['no source', { email: 'kid@example.com' }, /source is required/],
      ['a wrong source', { email: 'kid@example.com', source: 1 }, /source/],
      [
        'a wrong type',
        { email: 'kid@example.com', source: 'final_cta', subscription_type: ['club'] },
        /subscription_type/,
      ],
      [
        'a mismatched pair',
        { email: 'kid@example.com', source: 'final_cta', subscription_type: 'updates' },
        /does not go with source final_cta/,
      ],
      ['an extra field', { email: 'kid@example.com', source: 'hero_form', groups: ['1'] }, /groups/],
      ['a 10 kB source', { email: 'kid@example.com', source: 'x'.repeat(10_240) }, /source/],
    ])('%s', async (_, body, message) => {
      const { deps } = setup();
      const error = await expectHttpsError(handleAddContactToMailerlite(body, deps), 'invalid-argument');
      expect(error.message).toMatch(message);
    });
  });
});

describe('send-thank-you-email', () => {
  it('answers accepted, byte for byte the same for every well-formed address', async () => {
    const { deps, logger } = setup();
    const replies = await Promise.all(
      ['Kid@Example.com', 'kid+x@example.com', 'stranger@example.com'].map(async (email) =>
        JSON.stringify(await handleSendThankYouEmail({ email }, deps)),
      ),
    );
    expect(new Set(replies)).toEqual(new Set(['{"status":"accepted"}']));
    expect(logger.entries).toEqual([]);
  });

  it('refuses bad input with a clear message', async () => {
    for (const body of [undefined, { email: 'not an address' }, { email: 'kid@example.com', extra: 1 }]) {
      const { deps } = setup();
      await expectHttpsError(handleSendThankYouEmail(body, deps), 'invalid-argument');
    }
  });
});
