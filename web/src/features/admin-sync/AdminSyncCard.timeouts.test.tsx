/**
 * The admin sync when its call gets no answer, end to end in the page: the real card, flow and Firebase
 * boundary (real SDK) over a fake `fetch` whose request can hang, on a fake clock.
 */
import { fireEvent } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { expectToastOnFakeClock as expectToast, toJustBefore } from '@/test/fakeClockToast';
import { letWorkRun, until } from '@/test/fakeNetwork';
import { fakeNetworkForThePage } from '@/test/fakeNetworkForThePage';
import { renderApp, screen } from '@/test/renderApp';

const network = fakeNetworkForThePage();

/** Opens /admin (its page loads lazily, on real timers) and presses sync on a fake clock. */
async function pressSync() {
  renderApp('/admin');
  const button = await screen.findByRole('button', { name: 'Sync to the marketing service' });
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  fireEvent.click(button);
  return button;
}

describe('admin sync time bound', () => {
  it('a sync left unanswered is waited for past the function\'s own 540 s, then ends in "Sync Failed"', async () => {
    network.hang('sync-emails-to-mailerlite');
    const button = await pressSync();
    await until(() => network.requests.includes('sync-emails-to-mailerlite'), 'the sync call');

    await toJustBefore(570_000);
    expect(button).toHaveAccessibleName('Syncing...');
    expect(button).toBeDisabled();

    await vi.advanceTimersByTimeAsync(1);
    await expectToast({
      variant: 'error',
      title: 'Sync Failed',
      description: 'Failed to sync emails to the marketing service',
    });
    expect(button).toHaveAccessibleName('Sync to the marketing service');
    expect(button).toBeEnabled();

    // The reply that finally comes is ignored.
    network.releaseAll();
    await letWorkRun();
    expect(screen.getByRole('status').textContent).toBe('');
  });

  it('an answer in time is unaffected: its toast at once, and no bound fires afterwards', async () => {
    const button = await pressSync();
    await expectToast({
      variant: 'success',
      title: 'Sync Successful!',
      description: 'Synced 3 emails to the marketing service',
    });
    expect(button).toBeEnabled();

    await vi.advanceTimersByTimeAsync(600_000);
    expect(screen.getByRole('alert').textContent).toBe('');
  });
});
