/**
 * A sign-up whose calls get no answer, end to end in the page: the real form, flow and Firebase boundary
 * (real SDKs) over a fake `fetch` whose requests can hang, on a fake clock. Each bound ends in the spec's
 * outcome at its time and not before; answers in time are unaffected.
 */
import { fireEvent, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { expectToastOnFakeClock as expectToast, toJustBefore } from '@/test/fakeClockToast';
import { letWorkRun, until } from '@/test/fakeNetwork';
import { fakeNetworkForThePage } from '@/test/fakeNetworkForThePage';
import { renderApp, screen } from '@/test/renderApp';
import { EMAIL, TOASTS } from '@/test/signupExpectations';

const network = fakeNetworkForThePage();
let consoleError: ReturnType<typeof vi.spyOn>;

beforeEach(() => {
  consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
  // Only timeouts are fake: React, the Testing Library's polling and `until` keep real scheduling.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});

function submitHeroForm() {
  renderApp('/');
  const region = screen.getByRole('region', {
    name: 'The safe, social way for teens to buy and sell style',
  });
  const field = within(region).getByRole('textbox', { name: 'Email address' });
  const button = within(region).getByRole('button', { name: 'Get Early Access' });
  fireEvent.change(field, { target: { value: EMAIL } });
  fireEvent.click(button);
  return { field, button };
}

const logged = () => JSON.stringify(consoleError.mock.calls);

describe('sign-up time bounds', () => {
  // A Firestore request left unanswered: its 10 s bound, then the spec's error; the answer that finally comes
  // is ignored (nothing further sent, no other toast).
  it.each(
    Object.entries({
      'a connection test left unanswered ends at 10 s in "Connection Issue", the field kept, nothing inserted':
        {
          route: 'batchGet',
          what: 'the connection test',
          toast: TOASTS.connectionIssue,
          sent: ['batchGet'],
        },
      'an insert left unanswered ends at 10 s in "Database Error" / "Please try again later.", the field kept':
        {
          route: 'commit',
          what: 'the insert',
          toast: TOASTS.databaseErrorWithoutMessage,
          sent: ['batchGet', 'commit'],
        },
    } as const),
  )('%s', async (_name, { route, what, toast, sent }) => {
    network.hang(route);
    const { field, button } = submitHeroForm();
    await until(() => network.requests.includes(route), what);

    await toJustBefore(10_000);
    expect(button).toBeDisabled();

    await vi.advanceTimersByTimeAsync(1);
    await expectToast(toast);
    expect(field).toHaveValue(EMAIL);
    expect(button).toBeEnabled();

    network.releaseAll();
    await letWorkRun();
    expect(network.requests).toEqual(sent);
    expect(screen.getByRole('status').textContent).toBe('');
  });

  it('callables left unanswered are given up on after 20 s each, logged without the address, and the sign-up succeeds', async () => {
    network.hang('add-contact-to-mailerlite');
    network.hang('send-thank-you-email');
    const { field } = submitHeroForm();
    await until(() => network.requests.includes('add-contact-to-mailerlite'), 'the add-contact call');

    await toJustBefore(20_000);
    expect(network.requests).not.toContain('send-thank-you-email');
    await vi.advanceTimersByTimeAsync(1);
    await until(() => network.requests.includes('send-thank-you-email'), 'the thank-you call');

    await toJustBefore(20_000);
    await vi.advanceTimersByTimeAsync(1);
    await expectToast(TOASTS.heroSuccess);
    expect(field).toHaveValue('');
    expect(consoleError).toHaveBeenCalledTimes(2);
    expect(logged()).toContain('add-contact-to-mailerlite failed');
    expect(logged()).toContain('send-thank-you-email failed');
    expect(logged()).toContain('functions/deadline-exceeded');
    expect(logged()).not.toContain(EMAIL);
  });

  it('answers in time are unaffected: success at once, and no bound fires afterwards', async () => {
    const { field } = submitHeroForm();
    await expectToast(TOASTS.heroSuccess);
    expect(field).toHaveValue('');
    expect(network.requests).toEqual([
      'batchGet',
      'commit',
      'add-contact-to-mailerlite',
      'send-thank-you-email',
    ]);

    // Past every bound: nothing late reaches the screen or the log.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(screen.getByRole('alert').textContent).toBe('');
    expect(consoleError).not.toHaveBeenCalled();
  });
});
