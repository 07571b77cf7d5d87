// The parts of the site the thank-you and the sign-up depend on: the unsubscribe link's target answers as the
// product's page does, and the site the project serves carries the App Check key. That is read from what the
// project's Hosting serves, not from web/dist (which holds whatever was built last, the demo build after a
// test run): a build with a site key serves a Content-Security-Policy that allows reCAPTCHA Enterprise
// (web/plugins/content-security-policy.ts), and a build without one does not.

import { type CheckResult, cannotTell, fail, messageOf, pass } from './report.ts';

/**
 * What the product's `unsubscribe` answers to a link without its token (functions/src/http/unsubscribe.ts,
 * handleUnsubscribe): 400 and this sentence. A GET never erases anything, whatever its token.
 */
export const BAD_LINK_SENTENCE =
  'This unsubscribe link is incomplete or was changed, so nothing was deleted.';

export async function checkUnsubscribe(
  url: string | undefined,
  options: { requireHttps: boolean; offline?: string | null },
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
    if (options.offline) {
      return cannotTell(
        name,
        `${url} does not answer (${messageOf(error)}), and ${options.offline}: the network, not UNSUBSCRIBE_URL, may be the cause`,
        'run it where DNS and the network work',
      );
    }
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

/** A source the policy of a build with an App Check site key allows (web/plugins/content-security-policy.ts). */
export const APP_CHECK_SOURCE = 'https://www.google.com/recaptcha/';

/** The site a project serves by default: its Hosting site at <id>.web.app. */
export const servedSite = (projectId: string) => `https://${projectId}.web.app/`;

export async function checkServedAppCheck(
  siteUrl: string,
  options: { local: boolean; enforce: boolean },
): Promise<CheckResult> {
  const name = 'site: App Check';
  if (options.local) {
    return cannotTell(
      name,
      'the local stack runs demo-goody, which builds without App Check by design',
      'run with --project <id> once the site is deployed',
    );
  }
  let policy: string;
  try {
    const response = await fetch(siteUrl, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    await response.arrayBuffer();
    policy = response.headers.get('content-security-policy') ?? '';
    if (!response.ok || !policy) {
      return cannotTell(
        name,
        `${siteUrl} answers ${response.status}${policy ? '' : ' with no Content-Security-Policy'}: not the site npm run deploy serves`,
        'deploy the site (npm run deploy -- --project <id>), or give its address: --site <url>',
      );
    }
  } catch (error) {
    return cannotTell(
      name,
      `${siteUrl} does not answer: ${messageOf(error)}`,
      'deploy the site, or give its address: --site <url>',
    );
  }
  if (policy.includes(APP_CHECK_SOURCE)) {
    return pass(name, `${siteUrl} serves a build with an App Check site key`);
  }
  const rebuild =
    'set VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY in web/.env.production.local, then npm run deploy -- --project <id> (docs/configuration.md, App Check)';
  if (options.enforce) {
    return fail(
      name,
      `${siteUrl} serves a build without an App Check site key while ENFORCE_APP_CHECK=true: every sign-up and sync is refused`,
      `${rebuild}; or set ENFORCE_APP_CHECK=false in functions/.env.<project id> until then`,
    );
  }
  return fail(
    name,
    `${siteUrl} serves a build without an App Check site key, so nothing keeps scripts off Firestore and the callables`,
    rebuild,
  );
}
