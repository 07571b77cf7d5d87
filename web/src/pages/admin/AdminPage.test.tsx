import { within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { firebaseMock } from '@/test/firebaseMock';
import { renderApp, screen } from '@/test/renderApp';

vi.mock('@/lib/firebase', () => firebaseMock);

const robotsMeta = () => document.head.querySelector('meta[name="robots"]');

describe('Admin Dashboard (/admin)', () => {
  it('has a Back to Home link, the sync card with its button and a Coming Soon card', async () => {
    renderApp('/admin');
    expect(await screen.findByRole('heading', { level: 1, name: 'Admin Dashboard' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Back to Home' })).toHaveAttribute('href', '/');
    const sync = screen.getByRole('region', { name: 'E-mail sync' });
    expect(within(sync).getByRole('button', { name: 'Sync to the marketing service' })).toBeEnabled();
    expect(screen.getByRole('region', { name: 'Coming Soon' })).toBeInTheDocument();
  });

  it('asks search engines not to index it, only while it is shown', async () => {
    const { user } = renderApp('/admin');
    await screen.findByRole('heading', { level: 1, name: 'Admin Dashboard' });
    expect(robotsMeta()).toHaveAttribute('content', 'noindex');
    expect(document.title).toBe('Admin Dashboard · GOODY');

    await user.click(screen.getByRole('link', { name: 'Back to Home' }));
    expect(await screen.findByRole('heading', { level: 1 })).toHaveTextContent('buy and sell style');
    expect(robotsMeta()).toBeNull();
  });

  it('calls nothing until the button is pressed', async () => {
    renderApp('/admin');
    await screen.findByRole('heading', { level: 1, name: 'Admin Dashboard' });
    expect(firebaseMock.syncEmailsToMailerlite).not.toHaveBeenCalled();
  });
});
