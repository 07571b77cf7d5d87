import { describe, expect, it, vi } from 'vitest';
import { firebaseMock } from '@/test/firebaseMock';
import { renderApp, screen, waitFor } from '@/test/renderApp';

vi.mock('@/lib/firebase', () => firebaseMock);

describe('not-found page (any other path)', () => {
  it('says "Oops! Page not found.", links home and logs the missing path', async () => {
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    renderApp('/no/such/page');

    expect(
      await screen.findByRole('heading', { level: 1, name: 'Oops! Page not found.' }),
    ).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Return to Home' })).toHaveAttribute('href', '/');
    // Logged from an effect, after the page has painted.
    await waitFor(() =>
      expect(consoleError).toHaveBeenCalledWith(
        '404 Error: User attempted to access non-existent route:',
        '/no/such/page',
      ),
    );
    expect(document.head.querySelector('meta[name="robots"]')).toHaveAttribute('content', 'noindex');
  });

  it('Return to Home leads to the landing page', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const { user } = renderApp('/admin/typo');
    await user.click(await screen.findByRole('link', { name: 'Return to Home' }));
    expect(await screen.findByRole('button', { name: 'Get Early Access' })).toBeInTheDocument();
  });
});
