import { fireEvent } from '@testing-library/react';
import { FirebaseError } from 'firebase/app';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { answerNext, calls, failNext, firebaseMock, holdNext, resetFirebaseMock } from '@/test/firebaseMock';
import { deferred, expectToast, renderApp, screen, waitFor } from '@/test/renderApp';

vi.mock('@/lib/firebase', () => firebaseMock);

beforeEach(() => {
  resetFirebaseMock();
});

async function pressSync() {
  const rendered = renderApp('/admin');
  const button = await screen.findByRole('button', { name: 'Sync to the marketing service' });
  await rendered.user.click(button);
  return { ...rendered, button };
}

describe('admin sync', () => {
  it('calls sync-emails-to-mailerlite once; while it runs the button reads "Syncing..." and is disabled', async () => {
    const reply = deferred<unknown>();
    holdNext('syncEmailsToMailerlite', reply.promise);
    const { button } = await pressSync();

    expect(button).toHaveAccessibleName('Syncing...');
    expect(button).toBeDisabled();
    // user-event refuses to click a disabled button; a raw click proves it really does nothing.
    fireEvent.click(button);
    expect(calls).toEqual([['syncEmailsToMailerlite']]);

    reply.resolve({ success: true, synced: 2 });
    await waitFor(() => expect(button).toHaveAccessibleName('Sync to the marketing service'));
    expect(button).toBeEnabled();
    expect(firebaseMock.syncEmailsToMailerlite).toHaveBeenCalledTimes(1);
  });

  // Each outcome of the call, as the spec's toast; the button is ready again after each.
  it.each(
    Object.entries({
      'success: "Sync Successful!" with the server message': {
        answer: () =>
          answerNext('syncEmailsToMailerlite', {
            success: true,
            synced: 12,
            message: 'Synced 12 new contacts.',
          }),
        toast: { variant: 'success', title: 'Sync Successful!', description: 'Synced 12 new contacts.' },
      },
      'success without a message: "Synced {n} emails to the marketing service"': {
        answer: () => answerNext('syncEmailsToMailerlite', { success: true, synced: 42 }),
        toast: {
          variant: 'success',
          title: 'Sync Successful!',
          description: 'Synced 42 emails to the marketing service',
        },
      },
      'a failed call: "Sync Failed" with the error message': {
        answer: () =>
          failNext(
            'syncEmailsToMailerlite',
            new FirebaseError('functions/internal', 'MailerLite is not reachable.'),
          ),
        toast: { variant: 'error', title: 'Sync Failed', description: 'MailerLite is not reachable.' },
      },
      'a failed call without a message: "Failed to sync emails to the marketing service"': {
        answer: () => failNext('syncEmailsToMailerlite', new FirebaseError('functions/internal', '')),
        toast: {
          variant: 'error',
          title: 'Sync Failed',
          description: 'Failed to sync emails to the marketing service',
        },
      },
      'a reply with success: false: "Sync Failed" with its error': {
        answer: () =>
          answerNext('syncEmailsToMailerlite', { success: false, error: 'Another sync is already running.' }),
        toast: { variant: 'error', title: 'Sync Failed', description: 'Another sync is already running.' },
      },
      'a reply with success: false and no error: "Sync failed"': {
        answer: () => answerNext('syncEmailsToMailerlite', { success: false }),
        toast: { variant: 'error', title: 'Sync Failed', description: 'Sync failed' },
      },
    } as const),
  )('%s', async (_name, { answer, toast }) => {
    answer();
    const { button } = await pressSync();
    await expectToast(toast);
    expect(button).toBeEnabled();
  });
});
