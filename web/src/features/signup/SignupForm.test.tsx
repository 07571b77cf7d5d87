import { fireEvent, within } from '@testing-library/react';
import { FirebaseError } from 'firebase/app';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadBackend, prepareSignup } from '@/lib/backend';
import { calls, failNext, firebaseMock, holdNext, resetFirebaseMock } from '@/test/firebaseMock';
import { deferred, expectNoToast, expectToast, renderApp, screen, waitFor } from '@/test/renderApp';
import { EMAIL, TOASTS } from '@/test/signupExpectations';

vi.mock('@/lib/firebase', () => firebaseMock);
// The real lazy loader, wrapped so one test can make the Firebase module fail to load.
vi.mock('@/lib/backend', async (importOriginal) => {
  const actual = await importOriginal<typeof import('@/lib/backend')>();
  return { ...actual, loadBackend: vi.fn(actual.loadBackend), prepareSignup: vi.fn(actual.prepareSignup) };
});

const forms = {
  hero_form: {
    name: 'hero form',
    region: () =>
      screen.getByRole('region', { name: 'The safe, social way for teens to buy and sell style' }),
    button: 'Get Early Access',
    success: TOASTS.heroSuccess,
    insert: { email: EMAIL, subscription_type: 'updates', source: 'hero_form' },
    contact: { email: EMAIL, source: 'hero_form' },
  },
  final_cta: {
    name: 'final call to action (Join the Club)',
    region: () => screen.getByRole('region', { name: 'Join the GOODY Club' }),
    button: 'Join the Club',
    success: TOASTS.clubSuccess,
    insert: { email: EMAIL, subscription_type: 'club', source: 'final_cta' },
    contact: { email: EMAIL, source: 'final_cta', subscription_type: 'club' },
  },
} as const;

let consoleError: ReturnType<typeof vi.spyOn>;

beforeEach(() => {
  resetFirebaseMock();
  consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
});

afterEach(() => {
  vi.mocked(loadBackend).mockClear();
  vi.mocked(prepareSignup).mockClear();
});

function setup(form: (typeof forms)[keyof typeof forms]) {
  const rendered = renderApp('/');
  const region = form.region();
  const field = within(region).getByRole('textbox', { name: 'Email address' });
  const button = within(region).getByRole('button', { name: form.button });
  const submit = async (email = EMAIL) => {
    await rendered.user.type(field, email);
    await rendered.user.click(button);
  };
  return { ...rendered, region, field, button, submit };
}

/** Everything console.error received, as one string, to prove the address never reaches a log. */
const loggedText = () =>
  JSON.stringify(consoleError.mock.calls, (_key, value) => (value instanceof Error ? value.message : value));

describe.each(Object.entries(forms))('sign-up, %s', (_source, form) => {
  it('has one labelled, required e-mail field with autocomplete and one submit button', () => {
    const { region, field } = setup(form);
    expect(field).toHaveAttribute('type', 'email');
    expect(field).toHaveAttribute('autocomplete', 'email');
    expect(field).toBeRequired();
    expect(within(region).getAllByRole('textbox')).toHaveLength(1);
    expect(within(region).getAllByRole('button')).toHaveLength(1);
  });

  it('runs connection test -> insert -> add contact -> thank-you mail, then toasts success and clears the field', async () => {
    const { submit, field } = setup(form);
    await submit();

    await expectToast(form.success);
    expect(calls).toEqual([
      ['connectionTest'],
      ['insertSubscription', form.insert],
      ['addContactToMailerlite', form.contact],
      ['sendThankYouEmail', { email: EMAIL }],
    ]);
    expect(field).toHaveValue('');
    expect(consoleError).not.toHaveBeenCalled();
  });

  it('gets the backend ready as the address is typed, before the press (App Check fetches its token then)', async () => {
    const { user, field } = setup(form);
    expect(prepareSignup).not.toHaveBeenCalled();
    await user.type(field, 'teen');
    expect(prepareSignup).toHaveBeenCalled();
    expect(calls).toEqual([]);
  });

  // A failure before the row is stored: the spec's error toast, nothing past the failed call, the address kept.
  it.each(
    Object.entries({
      'a failed connection test ends in Connection Issue, inserts nothing and keeps the field': {
        fail: () =>
          failNext(
            'connectionTest',
            new FirebaseError('unavailable', 'Request failed with error: undefined'),
          ),
        toast: TOASTS.connectionIssue,
        called: ['connectionTest'],
      },
      "a refused insert ends in Database Error with the database's message and keeps the field": {
        fail: () =>
          failNext(
            'insertSubscription',
            new FirebaseError('permission-denied', 'Missing or insufficient permissions.'),
          ),
        toast: {
          variant: 'error',
          title: 'Database Error',
          description: 'Missing or insufficient permissions.',
        },
        called: ['connectionTest', 'insertSubscription'],
      },
      'a failed insert without a message ends in Database Error, "Please try again later."': {
        fail: () => failNext('insertSubscription', new FirebaseError('unknown', '')),
        toast: TOASTS.databaseErrorWithoutMessage,
        called: ['connectionTest', 'insertSubscription'],
      },
      'an unexpected exception (the Firebase module cannot load) ends in Network Error and keeps the field': {
        fail: () =>
          vi
            .mocked(loadBackend)
            .mockRejectedValueOnce(new TypeError('Failed to fetch dynamically imported module')),
        toast: {
          variant: 'error',
          title: 'Network Error',
          description: 'Please check your connection and try again.',
        },
        called: [],
      },
    } as const),
  )('%s', async (_name, { fail, toast, called }) => {
    fail();
    const { submit, field } = setup(form);
    await submit();

    await expectToast(toast);
    expect(calls.map(([name]) => name)).toEqual(called);
    expect(field).toHaveValue(EMAIL);
  });

  // A failed callable after the row is stored: logged for the team without the address; the visitor's success.
  it.each(
    Object.entries({
      'a failed add-contact call is logged without the address and does not stop the thank-you mail or success':
        {
          callable: 'addContactToMailerlite',
          error: new FirebaseError('functions/internal', `MailerLite refused ${EMAIL}`),
          logged: ['add-contact-to-mailerlite failed', 'functions/internal'],
        },
      'a failed thank-you mail is logged without the address and does not stop success': {
        callable: 'sendThankYouEmail',
        error: new FirebaseError('functions/unavailable', `SMTP down for ${EMAIL}`),
        logged: ['send-thank-you-email failed'],
      },
    } as const),
  )('%s', async (_name, { callable, error, logged }) => {
    failNext(callable, error);
    const { submit, field } = setup(form);
    await submit();

    await expectToast(form.success);
    expect(calls.map(([name]) => name)).toEqual([
      'connectionTest',
      'insertSubscription',
      'addContactToMailerlite',
      'sendThankYouEmail',
    ]);
    expect(field).toHaveValue('');
    expect(consoleError).toHaveBeenCalledTimes(1);
    for (const text of logged) expect(loggedText()).toContain(text);
    expect(loggedText()).not.toContain(EMAIL);
  });

  it('says in words that a sign-up is in flight: the button, the busy form and a polite status for screen readers', async () => {
    const connection = deferred<void>();
    holdNext('connectionTest', connection.promise);
    const { user, field, button, region } = setup(form);
    await user.type(field, EMAIL);
    await user.click(button);

    expect(button).toHaveTextContent('Signing you up…');
    expect(button).toBeDisabled();
    expect(field.closest('form')).toHaveAttribute('aria-busy', 'true');
    const announced = within(region).getByText('Signing you up…', { selector: 'p' });
    expect(announced).toHaveAttribute('aria-live', 'polite');

    connection.resolve();
    await expectToast(form.success);
    await waitFor(() => expect(button).toHaveTextContent(form.button));
    expect(announced).toHaveTextContent('');
    expect(field.closest('form')).toHaveAttribute('aria-busy', 'false');
  });

  it('disables the button while a sign-up is in flight, so a double click and a second submit insert once', async () => {
    const connection = deferred<void>();
    holdNext('connectionTest', connection.promise);
    const { user, field, button } = setup(form);
    await user.type(field, EMAIL);

    await user.dblClick(button);
    expect(button).toBeDisabled();
    fireEvent.submit(field.closest('form') as HTMLFormElement);
    await user.keyboard('{Enter}');

    connection.resolve();
    await expectToast(form.success);
    expect(firebaseMock.connectionTest).toHaveBeenCalledTimes(1);
    expect(firebaseMock.insertSubscription).toHaveBeenCalledTimes(1);
    await waitFor(() => expect(button).toBeEnabled());
  });

  it('an empty or malformed address submits nothing', async () => {
    const { user, field, button } = setup(form);
    await user.click(button);
    await user.type(field, 'not-an-address');
    await user.click(button);
    // Even a submit event that skips the browser's own validation is ignored.
    fireEvent.submit(field.closest('form') as HTMLFormElement);

    expect(calls).toEqual([]);
    expectNoToast();
    expect(button).toBeEnabled();
  });

  it('can sign up again after a failure', async () => {
    failNext('connectionTest', new Error('offline'));
    const { submit, user, button } = setup(form);
    await submit();
    await expectToast(TOASTS.connectionIssue);

    await user.click(button);
    await waitFor(() =>
      expect(screen.getByRole('status').textContent).toBe(
        `${form.success.title} ${form.success.description}`,
      ),
    );
    expect(firebaseMock.insertSubscription).toHaveBeenCalledTimes(1);
  });
});

it('the two forms work independently: a sign-up in one leaves the other untouched', async () => {
  renderApp('/');
  const hero = within(forms.hero_form.region()).getByRole('textbox', { name: 'Email address' });
  const final = within(forms.final_cta.region()).getByRole('textbox', { name: 'Email address' });
  fireEvent.change(final, { target: { value: 'other@example.com' } });
  fireEvent.change(hero, { target: { value: EMAIL } });
  fireEvent.click(within(forms.hero_form.region()).getByRole('button', { name: 'Get Early Access' }));

  await expectToast(TOASTS.heroSuccess);
  expect(hero).toHaveValue('');
  expect(final).toHaveValue('other@example.com');
});
