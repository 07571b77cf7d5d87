// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { deployRefusal, OPT_OUT } from './deploy-config.ts';

describe('npm run deploy', () => {
  it('refuses a build without an App Check site key, saying how to fix it or opt out', () => {
    const refusal = deployRefusal(false, {});
    expect(refusal).toContain('VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY');
    expect(refusal).toContain(`${OPT_OUT}=1`);
    expect(deployRefusal(false, { [OPT_OUT]: 'yes' })).toBeDefined();
  });

  it('ships a build with a site key, or one without when the opt-out is explicit', () => {
    expect(deployRefusal(true, {})).toBeUndefined();
    expect(deployRefusal(false, { [OPT_OUT]: '1' })).toBeUndefined();
  });
});
