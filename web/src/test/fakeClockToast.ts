import { screen } from '@testing-library/react';
import { expect, vi } from 'vitest';
import { letWorkRun, until } from './fakeNetwork';
import { type ExpectedToast, expectNoToast } from './renderApp';

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

/**
 * Moves the fake clock to 1 ms short of a time bound `boundMs` from now and proves no toast is shown yet: a
 * premature outcome would have rendered by then. The case's own last millisecond then reaches the bound.
 */
export async function toJustBefore(boundMs: number) {
  await vi.advanceTimersByTimeAsync(boundMs - 1);
  await letWorkRun();
  expectNoToast();
}
