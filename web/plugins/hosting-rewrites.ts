// Vite's dev server (npm run dev) serves the page without Hosting, so the rewrites firebase.json gives Hosting to
// a function (say `/api/<name>` -> that function, on the page's own origin) are made here, by Vite's proxy, the way
// firebase-tools' Hosting emulator makes them (lib/hosting/functionsProxy.js): to the Functions emulator's URL of
// the function when the page is on the emulators, else to the function's own host, with the request's path after
// it. The page then calls exactly what it calls when Hosting serves it. A build is untouched (dev server only).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadEnv, type Plugin, type ProxyOptions } from 'vite';
import { type FirebaseSettings, readFirebaseSettings } from '../src/lib/settings.ts';
import type { Json } from './build-policies.ts';

interface FunctionRewrite {
  source?: string;
  regex?: string;
  function: string | { functionId: string; region?: string };
  region?: string;
}

function isFunctionRewrite(rewrite: unknown): rewrite is FunctionRewrite {
  return typeof rewrite === 'object' && rewrite !== null && 'function' in rewrite;
}

/** Hosting's glob (a `source`), as a regular expression over the whole path: `**`, `*`, `?` and `{a,b}`. */
export function globToRegExpSource(glob: string): string {
  let out = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i] as string;
    if (char === '*' && glob[i + 1] === '*') {
      out += '.*';
      i++;
    } else if (char === '*') out += '[^/]*';
    else if (char === '?') out += '[^/]';
    else if (char === '{') {
      braces++;
      out += '(?:';
    } else if (char === '}' && braces > 0) {
      braces--;
      out += ')';
    } else if (char === ',' && braces > 0) out += '|';
    else out += char.replace(/[.+^$()|[\]{}\\]/g, '\\$&');
  }
  return out;
}

/**
 * Vite proxy entries for the function rewrites of a firebase.json's hosting, keyed by a regular expression over
 * the request's path (and query): where Hosting would send the request, and the function's path before it.
 * Negated sources (`!/assets/**`) only ever lead to the app shell, never to a function, and are left out.
 */
export function functionRewriteProxy(
  firebaseJson: Json,
  settings: Pick<FirebaseSettings, 'projectId' | 'emulators'>,
): Record<string, ProxyOptions> {
  const sites = Array.isArray(firebaseJson.hosting) ? firebaseJson.hosting : [firebaseJson.hosting];
  const proxy: Record<string, ProxyOptions> = {};
  for (const site of sites as { rewrites?: unknown[] }[]) {
    for (const rewrite of site?.rewrites ?? []) {
      if (!isFunctionRewrite(rewrite)) continue;
      // A `regex` is taken as a whole path's, as a `source` glob is.
      const pattern = rewrite.regex
        ? `(?:${rewrite.regex.replace(/^\^/, '').replace(/\$$/, '')})`
        : rewrite.source?.startsWith('!')
          ? undefined
          : rewrite.source && globToRegExpSource(rewrite.source);
      if (pattern === undefined) continue;
      const { functionId, region = rewrite.region ?? 'us-central1' } =
        typeof rewrite.function === 'string' ? { functionId: rewrite.function } : rewrite.function;
      const functions = settings.emulators?.functions;
      const [target, prefix] = functions
        ? [`http://${functions.host}:${functions.port}`, `/${settings.projectId}/${region}/${functionId}`]
        : [`https://${region}-${settings.projectId}.cloudfunctions.net`, `/${functionId}`];
      proxy[`^${pattern}(?:\\?.*)?$`] = {
        target,
        changeOrigin: true,
        // As the Hosting emulator sends it: X-Forwarded-Host and the others name the page's origin.
        xfwd: true,
        rewrite: (requestPath) => `${prefix}${requestPath}`,
      };
    }
  }
  return proxy;
}

/** The Vite plugin: the dev server proxies firebase.json's function rewrites (`policyFile` names it, as elsewhere). */
export function hostingFunctionRewrites(options: { firebaseJson: string }): Plugin {
  return {
    name: 'goody:hosting-function-rewrites',
    apply: 'serve',
    config(userConfig, env) {
      const root = path.resolve(userConfig.root ?? process.cwd());
      const firebaseJson = JSON.parse(readFileSync(path.resolve(root, options.firebaseJson), 'utf8')) as Json;
      const envDir = typeof userConfig.envDir === 'string' ? path.resolve(root, userConfig.envDir) : root;
      const settings = readFirebaseSettings(loadEnv(env.mode, envDir, 'VITE_'));
      return { server: { proxy: functionRewriteProxy(firebaseJson, settings) } };
    },
  };
}
