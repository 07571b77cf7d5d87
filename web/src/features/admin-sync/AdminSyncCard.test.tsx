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

  it('success: "Sync Successful!" with the server message', async () => {
    answerNext('syncEmailsToMailerlite', { success: true, synced: 12, message: 'Synced 12 new contacts.' });
    await pressSync();
    await expectToast({
      variant: 'success',
      title: 'Sync Successful!',
      description: 'Synced 12 new contacts.',
    });
  });

  it('success without a message: "Synced {n} emails to the marketing service"', async () => {
    answerNext('syncEmailsToMailerlite', { success: true, synced: 42 });
    await pressSync();
    await expectToast({
      variant: 'success',
      title: 'Sync Successful!',
      description: 'Synced 42 emails to the marketing service',
    });
  });

  it('a failed call: "Sync Failed" with the error message', async () => {
    failNext(
      'syncEmailsToMailerlite',
      new FirebaseError('functions/internal', 'MailerLite is not reachable.'),
    );
    await pressSync();
    await expectToast({
      variant: 'error',
      title: 'Sync Failed',
      description: 'MailerLite is not reachable.',
    });
  });

  it('a failed call without a message: "Failed to sync emails to the marketing service"', async () => {
    failNext('syncEmailsToMailerlite', new FirebaseError('functions/internal', ''));
    await pressSync();
    await expectToast({
      variant: 'error',
      title: 'Sync Failed',
      description: 'Failed to sync emails to the marketing service',
    });
  });

  it('a reply with success: false: "Sync Failed" with its error', async () => {
    answerNext('syncEmailsToMailerlite', { success: false, error: 'Another sync is already running.' });
    await pressSync();
    await expectToast({
      variant: 'error',
      title: 'Sync Failed',
      description: 'Another sync is already running.',
    });
  });

  it('a reply with success: false and no error: "Sync failed"', async () => {
    answerNext('syncEmailsToMailerlite', { success: false });
    const { button } = await pressSync();
    await expectToast({ variant: 'error', title: 'Sync Failed', description: 'Sync failed' });
    expect(button).toBeEnabled();
  });
});
