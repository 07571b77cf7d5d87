// @vitest-environment node
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { POLICY_FILE, withBuildPolicies } from './build-policies.ts';
import { APP_CHECK_SOURCES, policyForBuild, withSources } from './content-security-policy.ts';
import { BOOTSTRAP_HASH_SOURCE } from './landing-bootstrap.ts';

const firebaseJson = JSON.parse(readFileSync(new URL('../../firebase.json', import.meta.url), 'utf8')) as {
  hosting: { headers: Array<{ headers: Array<{ key: string; value: string }> }> };
};
const committedPolicy = firebaseJson.hosting.headers
  .flatMap((rule) => rule.headers)
  .find((header) => header.key === 'Content-Security-Policy')?.value as string;

const directive = (policy: string, name: string) =>
  policy
    .split('; ')
    .find((part) => part.split(' ')[0] === name)
    ?.split(' ')
    .slice(1) ?? null;

describe('the Content-Security-Policy a build serves', () => {
  it('without App Check: firebase.json’s policy as it is, which already allows the bootstrap', () => {
    expect(policyForBuild(committedPolicy, { appCheck: false })).toBe(committedPolicy);
    expect(directive(committedPolicy, 'script-src')).toContain(BOOTSTRAP_HASH_SOURCE);
  });

  it('adds the bootstrap hash to a policy that lacks it', () => {
    const policy = policyForBuild("default-src 'self'; script-src 'self'", { appCheck: false });
    expect(directive(policy, 'script-src')).toEqual(["'self'", BOOTSTRAP_HASH_SOURCE]);
  });

  it('with App Check: reCAPTCHA’s scripts and frames and the token endpoint, every other directive kept', () => {
    const policy = policyForBuild(committedPolicy, { appCheck: true });
    expect(directive(policy, 'script-src')).toEqual([
      ...(directive(committedPolicy, 'script-src') ?? []),
      ...(APP_CHECK_SOURCES['script-src'] ?? []),
    ]);
    expect(directive(policy, 'frame-src')).toEqual(APP_CHECK_SOURCES['frame-src']);
    expect(directive(policy, 'connect-src')).toContain('https://content-firebaseappcheck.googleapis.com');
    const untouched = (p: string) =>
      p
        .split('; ')
        .filter((part) => !['script-src', 'frame-src', 'connect-src'].includes(part.split(' ')[0] ?? ''));
    expect(untouched(policy)).toEqual(untouched(committedPolicy));
    // A new directive goes before object-src, with the fetch directives.
    expect(policy.indexOf('frame-src')).toBeLessThan(policy.indexOf('object-src'));
  });

  it('adds a source once, however often it is asked', () => {
    const twice = withSources(withSources("script-src 'self'", { 'script-src': ['a'] }), {
      'script-src': ['a'],
    });
    expect(twice).toBe("script-src 'self' a");
  });

  it('is what a firebase.json serves for the build that wrote it, and firebase.json’s own without one', () => {
    const siteDir = mkdtempSync(path.join(tmpdir(), 'goody-csp-'));
    try {
      expect(withBuildPolicies(firebaseJson, siteDir)).toEqual(firebaseJson);
      const appCheckPolicy = policyForBuild(committedPolicy, { appCheck: true });
      writeFileSync(
        path.join(siteDir, POLICY_FILE),
        JSON.stringify({ appCheck: true, policies: [appCheckPolicy] }),
      );
      const served = withBuildPolicies(firebaseJson, siteDir) as typeof firebaseJson;
      const value = served.hosting.headers
        .flatMap((rule) => rule.headers)
        .find((header) => header.key === 'Content-Security-Policy')?.value;
      expect(value).toBe(appCheckPolicy);
      // The repository's firebase.json is left as it is.
      expect(JSON.stringify(firebaseJson)).not.toContain('recaptcha');
    } finally {
      rmSync(siteDir, { recursive: true, force: true });
    }
  });
});
