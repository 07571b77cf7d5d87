// `npm run deploy` runs this between the build and `firebase deploy`: it writes firebase.deploy.json, the
// repository's firebase.json with the Content-Security-Policy the build in web/dist wrote
// (web/plugins/content-security-policy.ts: the bootstrap's hash always, reCAPTCHA and App Check's origins
// when the site was built with an App Check site key), and the deploy uses it. So turning App Check on is
// a setting of the build, never a hand edit of a policy.
//
// A build without an App Check site key is refused: anyone may write a sign-up, and App Check is what keeps
// a bot's scripts off Firestore and the callables. GOODY_DEPLOY_WITHOUT_APP_CHECK=1 ships one anyway, on
// purpose (a staging project, say).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { POLICY_FILE, readBuildPolicies, withBuildPolicies } from '../plugins/build-policies.ts';

export const OPT_OUT = 'GOODY_DEPLOY_WITHOUT_APP_CHECK';

/** Why this build must not be deployed, or undefined when it may. */
export function deployRefusal(appCheck: boolean, env: NodeJS.ProcessEnv): string | undefined {
  if (appCheck || env[OPT_OUT] === '1') return undefined;
  return (
    'The site was built without an App Check site key, so nothing would keep scripts off Firestore and the ' +
    'callables. Build with VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY set (docs/configuration.md, "App Check"), or deploy ' +
    `without App Check on purpose: ${OPT_OUT}=1 npm run deploy -- --project <id>.`
  );
}

function main(): void {
  const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const siteDir = path.join(repoRoot, 'web', 'dist');
  const build = readBuildPolicies(siteDir);
  if (!build) {
    console.error(`web/dist/${POLICY_FILE} is missing: build the site first (npm run build).`);
    process.exit(1);
  }
  const refusal = deployRefusal(build.appCheck, process.env);
  if (refusal) {
    console.error(refusal);
    process.exit(1);
  }
  const firebaseJson = JSON.parse(readFileSync(path.join(repoRoot, 'firebase.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  writeFileSync(
    path.join(repoRoot, 'firebase.deploy.json'),
    `${JSON.stringify(withBuildPolicies(firebaseJson, siteDir), null, 2)}\n`,
  );
  console.log(
    `firebase.deploy.json written: the site's policy ${build.appCheck ? 'allows App Check (reCAPTCHA Enterprise)' : `as firebase.json has it (no App Check: ${OPT_OUT}=1)`}.`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
