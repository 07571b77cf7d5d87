import { afterEach, beforeAll, beforeEach, vi } from 'vitest';
import { loadBackend } from '@/lib/backend';
import { fakeNetwork } from './fakeNetwork';

/**
 * The page's real Firebase boundary over a fake `fetch` whose requests can hang, for tests that advance a
 * fake clock while the page waits. Registers the suite's hooks; a file's own hooks, registered after, run
 * after these ones.
 */
export function fakeNetworkForThePage() {
  const network = fakeNetwork();

  beforeAll(async () => {
    vi.stubGlobal('fetch', network.fetch);
    // Loaded once up front, on real timers: the module loader is not what these tests are about.
    await loadBackend();
  });

  beforeEach(() => {
    network.reset();
    // Updates land while the fake clock is advanced, outside act(), as the Testing Library's own waits do.
    vi.stubGlobal('IS_REACT_ACT_ENVIRONMENT', false);
  });

  afterEach(() => {
    network.releaseAll();
    vi.useRealTimers();
    vi.stubGlobal('IS_REACT_ACT_ENVIRONMENT', true);
  });

  return network;
}
