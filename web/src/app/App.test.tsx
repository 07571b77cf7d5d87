import { describe, expect, it, vi } from 'vitest';
import { firebaseMock } from '@/test/firebaseMock';
import { renderApp, screen } from '@/test/renderApp';

vi.mock('@/lib/firebase', () => firebaseMock);

describe('routes', () => {
  it.each([
    ['/', 'The safe, social way for teens to buy and sell style'],
    ['/admin', 'Admin Dashboard'],
    ['/somewhere-else', 'Oops! Page not found.'],
  ])('%s shows "%s"', async (path, heading) => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    renderApp(path);
    expect(await screen.findByRole('heading', { level: 1, name: heading })).toBeInTheDocument();
  });

  it.each(['/', '/admin', '/missing'])('%s offers no sign-in of any kind', async (path) => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    renderApp(path);
    await screen.findByRole('heading', { level: 1 });
    expect(document.body.textContent).not.toMatch(/sign[ -]?in|log[ -]?in|password|account settings/i);
    expect(document.querySelector('input[type="password"]')).toBeNull();
  });
});
