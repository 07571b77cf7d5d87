import { describe, expect, it } from 'vitest';
import { functionsOverrides } from './config.ts';
import { LauncherError } from './errors.ts';

describe('functionsOverrides: App Check enforcement', () => {
  it('is left to the functions (not enforced) unless GOODY_ENFORCE_APP_CHECK says otherwise', () => {
    expect(functionsOverrides({})).not.toHaveProperty('ENFORCE_APP_CHECK');
    expect(functionsOverrides({ GOODY_ENFORCE_APP_CHECK: ' true ' })).toEqual({ ENFORCE_APP_CHECK: 'true' });
    expect(functionsOverrides({ GOODY_ENFORCE_APP_CHECK: 'false' })).toEqual({ ENFORCE_APP_CHECK: 'false' });
  });

  it('refuses anything but true or false, as the param reads only the exact "true"', () => {
    expect(() => functionsOverrides({ GOODY_ENFORCE_APP_CHECK: '1' })).toThrow(LauncherError);
    expect(() => functionsOverrides({ GOODY_ENFORCE_APP_CHECK: 'yes' })).toThrow(
      'GOODY_ENFORCE_APP_CHECK must be true or false, got "yes".',
    );
  });
});

describe("functionsOverrides: the reconciler's waits", () => {
  it('passes the queue wait and the confirm wait through to the functions, and refuses one that is not a positive number', () => {
    expect(
      functionsOverrides({ GOODY_DELIVERY_QUEUE_WAIT_SECONDS: '2', GOODY_DELIVERY_CONFIRM_SECONDS: ' 20 ' }),
    ).toEqual({ DELIVERY_QUEUE_WAIT_SECONDS: '2', DELIVERY_CONFIRM_SECONDS: '20' });
    expect(functionsOverrides({})).not.toHaveProperty('DELIVERY_CONFIRM_SECONDS');
    expect(() => functionsOverrides({ GOODY_DELIVERY_CONFIRM_SECONDS: '0' })).toThrow(
      'GOODY_DELIVERY_CONFIRM_SECONDS must be a positive number, got "0".',
    );
  });
});

describe("functionsOverrides: the mail budget's window", () => {
  it('passes a compressed hour through to the functions, and refuses one that is not a positive number', () => {
    expect(functionsOverrides({ GOODY_MAIL_PER_HOUR: '4', GOODY_MAIL_BUDGET_WINDOW_SECONDS: '60' })).toEqual({
      MAIL_PER_HOUR: '4',
      MAIL_BUDGET_WINDOW_SECONDS: '60',
    });
    expect(functionsOverrides({})).not.toHaveProperty('MAIL_BUDGET_WINDOW_SECONDS');
    expect(() => functionsOverrides({ GOODY_MAIL_BUDGET_WINDOW_SECONDS: '-1' })).toThrow(
      'GOODY_MAIL_BUDGET_WINDOW_SECONDS must be a positive number, got "-1".',
    );
  });
});
