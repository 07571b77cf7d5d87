/**
 * The sign-up flow as an explicit state machine (spec section 4). The reducer is pure; the calls and
 * toasts that move it live in `runSignup.ts` and `SignupForm.tsx`.
 *
 *   idle -> checkingConnection -> saving -> addingContact -> sendingThankYou -> succeeded
 *   checkingConnection | saving | (anything unexpected) -> failed
 *
 * The contact sync and thank-you steps always move on: their failures are logged, never fatal.
 */
export type SignupState =
  | 'idle'
  | 'checkingConnection'
  | 'saving'
  | 'addingContact'
  | 'sendingThankYou'
  | 'succeeded'
  | 'failed';

export type SignupEvent =
  | 'submitted'
  | 'connectionConfirmed'
  | 'saved'
  | 'contactStepDone'
  | 'thankYouStepDone'
  | 'failed';

const transitions: Record<SignupState, Partial<Record<SignupEvent, SignupState>>> = {
  idle: { submitted: 'checkingConnection' },
  checkingConnection: { connectionConfirmed: 'saving', failed: 'failed' },
  saving: { saved: 'addingContact', failed: 'failed' },
  addingContact: { contactStepDone: 'sendingThankYou', failed: 'failed' },
  sendingThankYou: { thankYouStepDone: 'succeeded', failed: 'failed' },
  succeeded: { submitted: 'checkingConnection' },
  failed: { submitted: 'checkingConnection' },
};

/** Events that make no sense in the current state (a second submit in flight) change nothing. */
export function signupReducer(state: SignupState, event: SignupEvent): SignupState {
  return transitions[state][event] ?? state;
}

export function isSignupInFlight(state: SignupState): boolean {
  return (
    state === 'checkingConnection' ||
    state === 'saving' ||
    state === 'addingContact' ||
    state === 'sendingThankYou'
  );
}
