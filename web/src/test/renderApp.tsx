import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter } from 'react-router-dom';
import { expect } from 'vitest';
import { App } from '@/app/App';

/** Renders the whole app (providers, routes, lazy pages) at a path, as a visitor would reach it. */
export function renderApp(path = '/') {
  const user = userEvent.setup();
  const view = render(
    <MemoryRouter initialEntries={[path]}>
      <App />
    </MemoryRouter>,
  );
  return { user, ...view };
}

export interface ExpectedToast {
  variant: 'success' | 'error';
  title: string;
  description: string;
}

/**
 * Waits for a toast and checks it exactly: the screen-reader announcement (role="alert" for the
 * error variant, role="status" for success) reads title then description, the visible toast shows
 * both with the variant's icon, and the other variant announced nothing.
 */
export async function expectToast({ variant, title, description }: ExpectedToast) {
  const region = screen.getByRole(variant === 'error' ? 'alert' : 'status');
  const other = screen.getByRole(variant === 'error' ? 'status' : 'alert');
  await waitFor(() => expect(region.textContent).toBe(`${title} ${description}`));
  expect(other.textContent).toBe('');

  const icon = await screen.findByRole('img', { name: variant === 'error' ? 'Error' : 'Success' });
  const toast = icon.closest('[data-variant]');
  expect(toast).toHaveAttribute('data-variant', variant);
  // Toasts live in the Notifications landmark, like every other piece of content.
  expect(screen.getByRole('region', { name: 'Notifications' })).toContainElement(toast as HTMLElement);
  expect(toast).toHaveTextContent(title);
  expect(toast).toHaveTextContent(description);
}

/** Asserts no toast was shown (or announced). */
export function expectNoToast() {
  expect(screen.getByRole('alert').textContent).toBe('');
  expect(screen.getByRole('status').textContent).toBe('');
  expect(screen.queryByRole('img', { name: /^(Error|Success)$/ })).toBeNull();
}

/** A promise the test settles by hand, to hold a call in flight. */
export function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export { screen, waitFor };
