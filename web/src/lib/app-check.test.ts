import { describe, expect, it } from 'vitest';
import { applyDebugTokenFromStorage, DEBUG_TOKEN_STORAGE_KEY } from './app-check';

function storage(value: string | null) {
  return { getItem: (key: string) => (key === DEBUG_TOKEN_STORAGE_KEY ? value : null) };
}

describe('applyDebugTokenFromStorage (dev server only)', () => {
  it('leaves debug mode off when nothing is stored, or there is no storage', () => {
    for (const source of [storage(null), storage(''), storage('  '), undefined]) {
      const target: { FIREBASE_APPCHECK_DEBUG_TOKEN?: string | boolean } = {};
      applyDebugTokenFromStorage(source, target);
      expect(target).toEqual({});
    }
  });

  it('asks the SDK to create and log a token for "true"', () => {
    const target: { FIREBASE_APPCHECK_DEBUG_TOKEN?: string | boolean } = {};
    applyDebugTokenFromStorage(storage('true'), target);
    expect(target.FIREBASE_APPCHECK_DEBUG_TOKEN).toBe(true);
  });

  it('uses a stored token as it is registered in the console', () => {
    const target: { FIREBASE_APPCHECK_DEBUG_TOKEN?: string | boolean } = {};
    applyDebugTokenFromStorage(storage(' 6f1f3c52-2d8a-4c3e-9a53-3f2b8f0a7c11 '), target);
    expect(target.FIREBASE_APPCHECK_DEBUG_TOKEN).toBe('6f1f3c52-2d8a-4c3e-9a53-3f2b8f0a7c11');
  });

  it('does not override a debug token the page already set', () => {
    const target: { FIREBASE_APPCHECK_DEBUG_TOKEN?: string | boolean } = {
      FIREBASE_APPCHECK_DEBUG_TOKEN: 'set-before',
    };
    applyDebugTokenFromStorage(storage('true'), target);
    expect(target.FIREBASE_APPCHECK_DEBUG_TOKEN).toBe('set-before');
  });
});
