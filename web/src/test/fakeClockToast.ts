import { screen } from '@testing-library/react';
import { expect } from 'vitest';
import { until } from './fakeNetwork';
import type { ExpectedToast } from './renderApp';

/**
 * `expectToast`'s checks, waiting on real turns: the Testing Library's waits settle through a
 * setTimeout, which the fake clock holds.
 */
export async function expectToastOnFakeClock({ variant, title, description }: ExpectedToast) {
  const region = screen.getByRole(variant === 'error' ? 'alert' : 'status');
  const iconName = variant === 'error' ? 'Error' : 'Success';
  await until(
    () =>
      region.textContent === `${title} ${description}` &&
      screen.queryByRole('img', { name: iconName }) !== null,
    `the toast "${title}"`,
  );
  expect(screen.getByRole(variant === 'error' ? 'status' : 'alert').textContent).toBe('');
  const toast = screen.getByRole('img', { name: iconName }).closest('[data-variant]');
  expect(toast).toHaveAttribute('data-variant', variant);
  expect(toast).toHaveTextContent(title);
  expect(toast).toHaveTextContent(description);
}
