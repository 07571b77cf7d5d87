// The web build's App Check key, read from the policy file the build writes into web/dist (as the deploy reads it).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { POLICY_FILE } from '../../web/plugins/build-policies.ts';
import { checkWebBuild } from './site.ts';

function builtSite(appCheck: boolean | null): string {
  const root = mkdtempSync(path.join(tmpdir(), 'goody-doctor-site-'));
  const dist = path.join(root, 'web', 'dist');
  mkdirSync(dist, { recursive: true });
  if (appCheck !== null)
    writeFileSync(path.join(dist, POLICY_FILE), JSON.stringify({ appCheck, policies: [] }));
  return root;
}

describe('the web build', () => {
  it('passes a build with the App Check key, and fails one without, or none, with the fix', () => {
    expect(checkWebBuild(builtSite(true), { local: false }).outcome).toBe('pass');
    const without = checkWebBuild(builtSite(false), { local: false });
    expect(without.outcome).toBe('fail');
    expect(without.fix).toContain('VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY');
    expect(checkWebBuild(builtSite(null), { local: false })).toMatchObject({
      outcome: 'fail',
      fix: expect.stringContaining('npm run build'),
    });
  });

  it('cannot tell on the local stack, which builds without App Check by design', () => {
    expect(checkWebBuild(builtSite(false), { local: true }).outcome).toBe('cannot tell');
  });
});
