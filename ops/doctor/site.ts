// The parts of the site the thank-you and the sign-up depend on: the unsubscribe link's target answers as the
// product's page does, and the web build carries the App Check key (web/dist's policy file, which
// web/scripts/deploy-config.ts reads for the deploy).

import path from 'node:path';
import { readBuildPolicies } from '../../web/plugins/build-policies.ts';
import { type CheckResult, cannotTell, fail, messageOf, pass } from './report.ts';

/**
 * What the product's `unsubscribe` answers to a link without its token (functions/src/http/unsubscribe.ts,
 * badLinkPage): 400 and this sentence. A GET never erases anything, whatever its token.
 */
export const BAD_LINK_SENTENCE =
  'This unsubscribe link is incomplete or was changed, so nothing was deleted.';

export async function checkUnsubscribe(
  url: string | undefined,
  options: { requireHttps: boolean },
): Promise<CheckResult> {
  const name = 'unsubscribe URL';
  const setIt =
    'set UNSUBSCRIBE_URL in functions/.env.<project id> to https://us-central1-<project id>.cloudfunctions.net/unsubscribe and deploy';
  if (!url)
    return fail(
      name,
      'UNSUBSCRIBE_URL is not set, so no thank-you is sent (thank_you.not_configured)',
      setIt,
    );
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return fail(name, `UNSUBSCRIBE_URL "${url}" is not a URL`, setIt);
  }
  if (options.requireHttps && parsed.protocol !== 'https:') {
    return fail(
      name,
      `${url} is not https: mail providers' one-click unsubscribe needs https (RFC 8058)`,
      setIt,
    );
  }
  if (parsed.search) {
    return fail(name, `${url} carries a query; the thank-you appends its own (?a=…&t=…)`, setIt);
  }
  let status: number;
  let body: string;
  try {
    const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    status = response.status;
    body = await response.text();
  } catch (error) {
    return fail(
      name,
      `${url} does not answer: ${messageOf(error)}`,
      options.requireHttps ? setIt : 'start the local stack: npm start',
    );
  }
  if (status === 400 && body.includes(BAD_LINK_SENTENCE)) {
    return pass(
      name,
      `${url} answers as the product's unsubscribe page does (400 to a link without its token)`,
    );
  }
  if (status >= 300 && status < 400) {
    return fail(
      name,
      `${url} redirects (${status}): a mail provider's one-click POST does not follow it`,
      setIt,
    );
  }
  return fail(name, `${url} answers ${status}, not the product's unsubscribe page`, setIt);
}

export function checkWebBuild(repoRoot: string, options: { local: boolean }): CheckResult {
  const name = 'web build: App Check';
  const build = readBuildPolicies(path.join(repoRoot, 'web', 'dist'));
  if (options.local) {
    return cannotTell(
      name,
      'the local stack runs demo-goody, which builds without App Check by design',
      'run with --project <id> after npm run build',
    );
  }
  if (!build) {
    return fail(
      name,
      'web/dist holds no build (its policy file is missing)',
      "build the site with the project's settings: npm run build",
    );
  }
  return build.appCheck
    ? pass(name, 'web/dist was built with an App Check site key')
    : fail(
        name,
        'web/dist was built without an App Check site key, so nothing keeps scripts off Firestore and the callables',
        'set VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY in web/.env.production.local and build again (docs/configuration.md, App Check)',
      );
}
