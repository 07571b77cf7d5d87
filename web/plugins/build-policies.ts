// The policies a build wrote beside the site (web/plugins/content-security-policy.ts), read by whatever serves
// it: the deploy (web/scripts/deploy-config.ts) and npm start's Hosting emulator (dev/launcher/stack-files.ts).
// No dependencies, so the launcher can read it without the web build's toolchain.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const POLICY_FILE = '.content-security-policy.json';

export type Json = Record<string, unknown>;
interface HeaderRule {
  source?: string;
  headers?: Array<{ key: string; value: string }>;
}

function hostingSites(firebaseJson: Json): Array<{ headers?: HeaderRule[] }> {
  const hosting = firebaseJson.hosting;
  return (Array.isArray(hosting) ? hosting : [hosting]).filter(Boolean) as Array<{ headers?: HeaderRule[] }>;
}

/** Every Content-Security-Policy header of a firebase.json's hosting, changed by `change` (in place). */
export function mapPolicies(firebaseJson: Json, change: (policy: string) => string): Json {
  for (const site of hostingSites(firebaseJson)) {
    for (const rule of site.headers ?? []) {
      for (const header of rule.headers ?? []) {
        if (header.key.toLowerCase() === 'content-security-policy') header.value = change(header.value);
      }
    }
  }
  return firebaseJson;
}

export interface BuildPolicies {
  /** The App Check site key the build was given, if any (public: it is in the page). */
  appCheck: boolean;
  /** firebase.json's policies as this build serves them, in the order firebase.json lists them. */
  policies: string[];
}

/** The policies of the build in `siteDir` (written by the plugin below); null for a site built without it. */
export function readBuildPolicies(siteDir: string): BuildPolicies | null {
  try {
    return JSON.parse(readFileSync(path.join(siteDir, POLICY_FILE), 'utf8')) as BuildPolicies;
  } catch {
    return null;
  }
}

/**
 * A firebase.json whose hosting serves the build in `siteDir` with the policies that build wrote (a copy; the
 * argument is not changed). A site built before this plugin existed keeps firebase.json's policies.
 */
export function withBuildPolicies(firebaseJson: Json, siteDir: string): Json {
  const config = structuredClone(firebaseJson);
  const build = readBuildPolicies(siteDir);
  if (!build) return config;
  let index = 0;
  return mapPolicies(config, (policy) => build.policies[index++] ?? policy);
}
