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
