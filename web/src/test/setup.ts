import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';

// /admin and the not-found page are lazy chunks: under `npm test`, every package's suites share two cores,
// and the first import of a lazy route can take longer than Testing Library's default 1 s wait.
configure({ asyncUtilTimeout: 5_000 });

afterEach(() => {
  cleanup();
});
