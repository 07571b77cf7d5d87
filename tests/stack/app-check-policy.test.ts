// Turning App Check on is a setting of the build, not a hand edit of a policy: the site built with an App Check
// site key (a dummy one here, for a made-up project) is served with a Content-Security-Policy that allows both
// the landing page's inline bootstrap and Google's reCAPTCHA, as the deploy (web/scripts/deploy-config.ts) and
// the Hosting emulator serve it.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withBuildPolicies } from '../../web/plugins/build-policies.ts';
import { type ServedSite, serveLikeHostingEmulator } from './hosting-emulator.ts';
import { repoRoot } from './launcher-process.ts';

const APP_CHECK_BUILD = {
  VITE_FIREBASE_PROJECT_ID: 'goody-app-check-test',
  VITE_FIREBASE_API_KEY: 'AIzaSyA-dummy-key-for-a-build-test-000000',
  VITE_FIREBASE_APP_ID: '1:123456789012:web:0123456789abcdef012345',
  VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY: '6Lc-dummy-site-key-for-a-build-test-00000',
};

let outDir: string;
let site: ServedSite;
let html: string;
let policy: Map<string, string[]>;

beforeAll(async () => {
  outDir = mkdtempSync(path.join(tmpdir(), 'goody-app-check-build-'));
  const build = spawnSync('npm', ['run', 'build', '-w', 'web', '--', '--outDir', outDir, '--emptyOutDir'], {
    cwd: repoRoot,
    env: { ...process.env, ...APP_CHECK_BUILD, NODE_ENV: 'production' },
    encoding: 'utf8',
  });
  expect(build.status, `${build.stdout}\n${build.stderr}`).toBe(0);
  const firebaseJson = JSON.parse(readFileSync(path.join(repoRoot, 'firebase.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const { hosting } = withBuildPolicies(firebaseJson, outDir) as {
    hosting: Record<string, unknown> & { public: string };
  };
  site = await serveLikeHostingEmulator(hosting, (publicDir) =>
    cpSync(outDir, publicDir, { recursive: true }),
  );
  const response = await fetch(site.origin);
  html = await response.text();
  policy = new Map(
    (response.headers.get('content-security-policy') ?? '')
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .map(([name = '', ...sources]) => [name, sources] as const),
  );
}, 240_000);

afterAll(async () => {
  await site?.close();
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

describe('a site built with an App Check site key, as served', () => {
  it("allows the landing page's inline bootstrap by the hash of the script the page really carries", () => {
    const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
      (m) => m[1] ?? '',
    );
    expect(inline.length).toBeGreaterThan(0);
    for (const script of inline) {
      const hash = `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`;
      expect(policy.get('script-src')).toContain(hash);
    }
  });

  it("allows reCAPTCHA's scripts and frames and App Check's token endpoint", () => {
    expect(policy.get('script-src')).toEqual(
      expect.arrayContaining(['https://www.google.com/recaptcha/', 'https://www.gstatic.com/recaptcha/']),
    );
    expect(policy.get('frame-src')).toEqual(
      expect.arrayContaining([
        'https://www.google.com/recaptcha/',
        'https://recaptcha.google.com/recaptcha/',
      ]),
    );
    expect(policy.get('connect-src')).toContain('https://content-firebaseappcheck.googleapis.com');
    // Everything else as firebase.json has it.
    expect(policy.get('object-src')).toEqual(["'none'"]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
  });

  it('keeps the policy file out of a deploy (firebase.json ignores dotfiles; the header says the same anyway)', () => {
    const { hosting } = JSON.parse(readFileSync(path.join(repoRoot, 'firebase.json'), 'utf8')) as {
      hosting: { ignore: string[] };
    };
    expect(hosting.ignore).toContain('**/.*');
  });
});
