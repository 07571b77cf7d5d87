// The Content-Security-Policy follows the build. firebase.json holds the policy of a site built without App
// Check (its script-src carries the landing page's bootstrap hash, which the build checks). A build given an
// App Check site key needs Google's reCAPTCHA and the App Check token endpoint too, so the build writes the
// policies it needs beside the site (<outDir>/.content-security-policy.json; Hosting serves no dotfile), and
// whatever serves the site takes them from there: the deploy (npm run deploy, through
// firebase.deploy.json) and npm start's Hosting emulator. No one edits a policy by hand.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Plugin, ResolvedConfig } from 'vite';
import { type BuildPolicies, type Json, mapPolicies, POLICY_FILE } from './build-policies.ts';
import { BOOTSTRAP_HASH_SOURCE } from './landing-bootstrap.ts';

/** What App Check with reCAPTCHA Enterprise loads and calls, per reCAPTCHA's CSP guidance. */
export const APP_CHECK_SOURCES: Record<string, string[]> = {
  'script-src': ['https://www.google.com/recaptcha/', 'https://www.gstatic.com/recaptcha/'],
  'frame-src': ['https://www.google.com/recaptcha/', 'https://recaptcha.google.com/recaptcha/'],
  'connect-src': ['https://content-firebaseappcheck.googleapis.com'],
};

/** A policy with `sources` added to its directives (a directive it lacks is added); the order is kept. */
export function withSources(policy: string, sources: Record<string, string[]>): string {
  const directives = policy
    .split(';')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => part.split(/\s+/));
  for (const [name, add] of Object.entries(sources)) {
    let directive = directives.find(([existing]) => existing === name);
    if (!directive) {
      directive = [name];
      // Before the directives that close a policy by convention, after the fetch directives.
      const at = directives.findIndex(([existing]) => existing === 'object-src');
      directives.splice(at < 0 ? directives.length : at, 0, directive);
    }
    for (const source of add) if (!directive.includes(source)) directive.push(source);
  }
  return directives.map((parts) => parts.join(' ')).join('; ');
}

/** The policy a build serves: the base, its bootstrap allowed by hash, and App Check's sources when on. */
export function policyForBuild(basePolicy: string, options: { appCheck: boolean }): string {
  const sources: Record<string, string[]> = { 'script-src': [BOOTSTRAP_HASH_SOURCE] };
  if (options.appCheck) {
    for (const [name, add] of Object.entries(APP_CHECK_SOURCES))
      sources[name] = [...(sources[name] ?? []), ...add];
  }
  return withSources(basePolicy, sources);
}

/** The Vite plugin: writes the policies of this build beside it. */
export function contentSecurityPolicy(options: { policyFile: string }): Plugin {
  let config: ResolvedConfig;
  return {
    name: 'goody:content-security-policy',
    apply: (userConfig, env) => env.command === 'build' && !userConfig.build?.ssr,
    configResolved(resolved) {
      config = resolved;
    },
    writeBundle() {
      const firebaseJson = JSON.parse(
        readFileSync(path.resolve(config.root, options.policyFile), 'utf8'),
      ) as Json;
      const appCheck = Boolean(String(config.env.VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY ?? '').trim());
      const policies: string[] = [];
      mapPolicies(firebaseJson, (policy) => {
        policies.push(policyForBuild(policy, { appCheck }));
        return policy;
      });
      const build: BuildPolicies = { appCheck, policies };
      writeFileSync(
        path.join(path.resolve(config.root, config.build.outDir), POLICY_FILE),
        `${JSON.stringify(build, null, 2)}\n`,
      );
      config.logger.info(
        `[goody:content-security-policy] ${POLICY_FILE} written: bootstrap allowed by hash${appCheck ? ', App Check (reCAPTCHA Enterprise) allowed' : ''}`,
      );
    },
  };
}
