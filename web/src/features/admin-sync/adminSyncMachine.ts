/**
 * The admin sync as a state machine (spec section 4): idle -> syncing -> succeeded | failed.
 * A press while syncing changes nothing; after either outcome the operator may sync again.
 */
export type AdminSyncState = 'idle' | 'syncing' | 'succeeded' | 'failed';
export type AdminSyncEvent = 'started' | 'succeeded' | 'failed';

const transitions: Record<AdminSyncState, Partial<Record<AdminSyncEvent, AdminSyncState>>> = {
  idle: { started: 'syncing' },
  syncing: { succeeded: 'succeeded', failed: 'failed' },
  succeeded: { started: 'syncing' },
  failed: { started: 'syncing' },
};

export function adminSyncReducer(state: AdminSyncState, event: AdminSyncEvent): AdminSyncState {
  return transitions[state][event] ?? state;
}
