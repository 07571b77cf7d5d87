import { describe, expect, it } from 'vitest';
import { isSignupInFlight, type SignupEvent, type SignupState, signupReducer } from './signupMachine';

function run(events: SignupEvent[], from: SignupState = 'idle'): SignupState[] {
  const states: SignupState[] = [];
  let state = from;
  for (const event of events) {
    state = signupReducer(state, event);
    states.push(state);
  }
  return states;
}

describe('signupReducer', () => {
  it('walks the spec order to success', () => {
    expect(run(['submitted', 'connectionConfirmed', 'saved', 'contactStepDone', 'thankYouStepDone'])).toEqual(
      ['checkingConnection', 'saving', 'addingContact', 'sendingThankYou', 'succeeded'],
    );
  });

  it('fails from the connection test or the insert', () => {
    expect(run(['submitted', 'failed'])).toEqual(['checkingConnection', 'failed']);
    expect(run(['submitted', 'connectionConfirmed', 'failed']).at(-1)).toBe('failed');
  });

  it('ignores a second submit while in flight, and allows a new one after an outcome', () => {
    expect(signupReducer('saving', 'submitted')).toBe('saving');
    expect(signupReducer('succeeded', 'submitted')).toBe('checkingConnection');
    expect(signupReducer('failed', 'submitted')).toBe('checkingConnection');
  });

  it('ignores events out of order', () => {
    expect(signupReducer('idle', 'saved')).toBe('idle');
    expect(signupReducer('checkingConnection', 'thankYouStepDone')).toBe('checkingConnection');
  });

  it('counts every step between submit and outcome as in flight', () => {
    const inFlight = (
      [
        'idle',
        'checkingConnection',
        'saving',
        'addingContact',
        'sendingThankYou',
        'succeeded',
        'failed',
      ] as const
    ).filter(isSignupInFlight);
    expect(inFlight).toEqual(['checkingConnection', 'saving', 'addingContact', 'sendingThankYou']);
  });
});
