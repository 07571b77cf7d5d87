import { vi } from 'vitest';
import type { Backend } from '@/lib/backend';

/**
 * Stand-ins for the calls of `@/lib/firebase`, the project's own Firebase boundary. Test files
 * register them with `vi.mock('@/lib/firebase', () => firebaseMock)` (vi.mock must stay in the
 * test file). Every call is also written to `calls`, so a test can check the order across calls.
 */
export const calls: [name: string, ...args: unknown[]][] = [];

function recorded<K extends keyof Backend>(name: K) {
  return vi.fn(async (...args: unknown[]) => {
    calls.push([name, ...args]);
    return undefined as never;
  });
}

export const firebaseMock = {
  settings: {},
  connectionTest: recorded('connectionTest'),
  insertSubscription: recorded('insertSubscription'),
  addContactToMailerlite: recorded('addContactToMailerlite'),
  sendThankYouEmail: recorded('sendThankYouEmail'),
  syncEmailsToMailerlite: recorded('syncEmailsToMailerlite'),
  /** Made while an address is typed, outside the sign-up's calls: counted here, not in `calls`. */
  warmConnectionTest: vi.fn(async () => {}),
};

type CallName = Exclude<keyof typeof firebaseMock, 'settings'>;
const callNames: CallName[] = [
  'connectionTest',
  'insertSubscription',
  'addContactToMailerlite',
  'sendThankYouEmail',
  'syncEmailsToMailerlite',
];

/** Every call succeeds (insert returns an id; callables return nothing in particular). */
export function resetFirebaseMock() {
  calls.length = 0;
  firebaseMock.warmConnectionTest.mockClear();
  for (const name of callNames) {
    const fn = firebaseMock[name];
    fn.mockReset();
    fn.mockImplementation(async (...args: unknown[]) => {
      calls.push([name, ...args]);
      if (name === 'insertSubscription') return { id: 'doc-1' } as never;
      if (name === 'syncEmailsToMailerlite') return { success: true, synced: 0 } as never;
      return undefined as never;
    });
  }
}

/** Makes one call fail (or hang) while still recording that it was made. */
export function failNext(name: CallName, error: unknown) {
  firebaseMock[name].mockImplementationOnce(async (...args: unknown[]) => {
    calls.push([name, ...args]);
    throw error;
  });
}

export function holdNext<T>(name: CallName, promise: Promise<T>) {
  firebaseMock[name].mockImplementationOnce(async (...args: unknown[]) => {
    calls.push([name, ...args]);
    return (await promise) as never;
  });
}

export function answerNext(name: 'syncEmailsToMailerlite', value: unknown) {
  firebaseMock[name].mockImplementationOnce(async () => {
    calls.push([name]);
    return value as never;
  });
}
