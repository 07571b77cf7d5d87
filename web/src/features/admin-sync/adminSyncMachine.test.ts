import { describe, expect, it } from 'vitest';
import { adminSyncReducer } from './adminSyncMachine';

describe('adminSyncReducer', () => {
  it('idle -> syncing -> succeeded | failed, and again', () => {
    expect(adminSyncReducer('idle', 'started')).toBe('syncing');
    expect(adminSyncReducer('syncing', 'succeeded')).toBe('succeeded');
    expect(adminSyncReducer('syncing', 'failed')).toBe('failed');
    expect(adminSyncReducer('succeeded', 'started')).toBe('syncing');
    expect(adminSyncReducer('failed', 'started')).toBe('syncing');
  });

  it('a second start while syncing changes nothing', () => {
    expect(adminSyncReducer('syncing', 'started')).toBe('syncing');
  });
});
