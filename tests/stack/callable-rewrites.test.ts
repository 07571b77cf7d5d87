// The page calls its two sign-up callables on its own origin (web/src/lib/config.ts, SITE_CALLABLES), and
// firebase.json's Hosting rewrites send those paths to the functions. A rewrite that names a function or a
// region the functions do not deploy to fails only in a deploy (firebase-tools looks the function up in the
// project's backend then) or, worse, deploys and answers 404 to every sign-up. So the rewrites are checked here
// against what the functions module really declares, read the way the CLI reads it: firebase-functions' own
// discovery (lib/runtime/loader.js, extractStack) over functions/src/index.ts, global options included; and in
// the config the deploy ships (web/scripts/deploy-config.ts writes firebase.deploy.json from firebase.json).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path, { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLICY_FILE, withBuildPolicies } from '../../web/plugins/build-policies.ts';
import { callablePath, SITE_CALLABLES } from '../../web/src/lib/config.ts';
import { type ServedSite, serveLikeHostingEmulator } from './hosting-emulator.ts';
import { repoRoot } from './launcher-process.ts';

interface FunctionRewrite {
  source: string;
  function: { functionId: string; region?: string };
}
type Rewrite = FunctionRewrite | { source: string; destination: string };

interface Endpoint {
  platform: string;
  region: string[];
  entryPoint: string;
  timeoutSeconds?: number;
  callableTrigger?: object;
}

const firebaseJson = JSON.parse(readFileSync(join(repoRoot, 'firebase.json'), 'utf8')) as {
  hosting: Record<string, unknown> & { public: string; rewrites: Rewrite[] };
};
const rewrites = firebaseJson.hosting.rewrites;
const functionRewrites = rewrites.filter((rewrite): rewrite is FunctionRewrite => 'function' in rewrite);

/** Hosting (and its emulator) cut a rewritten request at 60 s, whatever the function's own timeout. */
const HOSTING_REQUEST_TIMEOUT_SECONDS = 60;

let endpoints: Record<string, Endpoint>;

beforeAll(async () => {
  // The CLI's discovery: every exported function by its id (nested export groups joined with "-"), with the
  // endpoint firebase-functions built for it (region from setGlobalOptions or the function's own options).
  const sdkDir = path.dirname(path.dirname(createRequire(import.meta.url).resolve('firebase-functions')));
  const { extractStack } = createRequire(import.meta.url)(join(sdkDir, 'runtime', 'loader.js')) as {
    extractStack: (module: object, endpoints: object, requiredAPIs: unknown[], extensions: object) => void;
  };
  // By URL, so the type checker of this workspace does not compile the functions workspace's sources.
  const functionsModule = (await import(
    new URL('../../functions/src/index.ts', import.meta.url).href
  )) as object;
  endpoints = {};
  extractStack(functionsModule, endpoints, [], {});
}, 60_000);

describe("firebase.json's callable rewrites against the functions as deployed", () => {
  it("sends each of the page's same-origin callables, at the path the page calls, to the function of that name", () => {
    expect(SITE_CALLABLES.length).toBeGreaterThan(0);
    for (const name of SITE_CALLABLES) {
      expect(functionRewrites.filter((rewrite) => rewrite.source === callablePath(name))).toEqual([
        { source: callablePath(name), function: { functionId: name, region: expect.any(String) } },
      ]);
    }
    // And nothing else: every function rewrite is one the page calls.
    expect(functionRewrites.map((rewrite) => rewrite.function.functionId).sort()).toEqual(
      [...SITE_CALLABLES].sort(),
    );
  });

  it('names, for each, a 2nd-gen callable that the functions module deploys, in the region the rewrite names', () => {
    expect(Object.keys(endpoints).length).toBeGreaterThan(0);
    for (const { function: target } of functionRewrites) {
      const endpoint = endpoints[target.functionId];
      expect(endpoint, `no function ${target.functionId} in functions/src/index.ts`).toBeDefined();
      // Named explicitly: without a region, deploy and emulator alike assume us-central1.
      expect(target.region).toBeDefined();
      expect({ id: target.functionId, regions: endpoint?.region }).toEqual({
        id: target.functionId,
        regions: [target.region],
      });
      expect(endpoint?.platform).toBe('gcfv2');
      expect(endpoint?.callableTrigger).toBeDefined();
    }
  });

  it("rewrites only functions that answer within Hosting's 60 s; the sync (up to 540 s) is called on its own host", () => {
    for (const { function: target } of functionRewrites) {
      expect({
        id: target.functionId,
        within: (endpoints[target.functionId]?.timeoutSeconds ?? 60) <= HOSTING_REQUEST_TIMEOUT_SECONDS,
      }).toEqual({ id: target.functionId, within: true });
    }
    expect(endpoints['sync-emails-to-mailerlite']?.timeoutSeconds).toBeGreaterThan(
      HOSTING_REQUEST_TIMEOUT_SECONDS,
    );
    expect(functionRewrites.map((rewrite) => rewrite.function.functionId)).not.toContain(
      'sync-emails-to-mailerlite',
    );
  });

  it("comes before the app shell's catch-all (the first matching rewrite wins), each for one exact path", () => {
    const catchAll = rewrites.findIndex((rewrite) => rewrite.source === '!/assets/**');
    expect(catchAll).toBe(rewrites.length - 1);
    for (const rewrite of functionRewrites) {
      expect(rewrites.indexOf(rewrite)).toBeLessThan(catchAll);
      expect(rewrite.source).toMatch(/^\/api\/[a-z-]+$/);
    }
  });

  it('is what the deploy ships: firebase.deploy.json keeps the rewrites of firebase.json as they are', () => {
    const siteDir = mkdtempSync(join(tmpdir(), 'goody-deploy-config-'));
    try {
      // A build's policy file, as web/plugins/content-security-policy.ts writes it.
      writeFileSync(
        join(siteDir, POLICY_FILE),
        JSON.stringify({ appCheck: true, policies: ["default-src 'self'"] }),
      );
      const deployed = withBuildPolicies(firebaseJson, siteDir) as typeof firebaseJson;
      expect(deployed.hosting.rewrites).toEqual(rewrites);
    } finally {
      rmSync(siteDir, { recursive: true, force: true });
    }
  });
});

describe("the rewrites as the Hosting emulator's engine routes them (superstatic)", () => {
  let site: ServedSite;

  beforeAll(async () => {
    // Answers a function rewrite the way firebase-tools' functionsProxy resolves one (its region defaulting
    // to us-central1), naming what the request reached instead of proxying it to a Functions emulator.
    site = await serveLikeHostingEmulator(
      firebaseJson.hosting,
      (publicDir) => {
        mkdirSync(join(publicDir, 'assets'), { recursive: true });
        writeFileSync(join(publicDir, 'index.html'), '<!doctype html><title>landing</title>');
        writeFileSync(join(publicDir, 'shell.html'), '<!doctype html><title>app shell</title>');
      },
      async (rewrite) => (request, response) => {
        response.setHeader('content-type', 'application/json');
        response.end(
          JSON.stringify({
            functionId: rewrite.function.functionId,
            region: rewrite.function.region ?? 'us-central1',
            method: request.method,
            url: request.url,
          }),
        );
      },
    );
  });

  afterAll(async () => {
    await site?.close();
  });

  it.each(SITE_CALLABLES.map((name) => [callablePath(name), name]))(
    'a POST to %s reaches the function %s in us-central1',
    async (urlPath, name) => {
      const response = await fetch(`${site.origin}${urlPath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ data: {} }),
      });
      expect(await response.json()).toEqual({
        functionId: name,
        region: 'us-central1',
        method: 'POST',
        url: urlPath,
      });
    },
  );

  it.each(['/api', '/api/sync-emails-to-mailerlite', '/api/add-contact-to-mailerlite/more', '/admin'])(
    'anything else (%s) is still the app shell',
    async (urlPath) => {
      const response = await fetch(`${site.origin}${urlPath}`);
      expect(await response.text()).toContain('app shell');
    },
  );
});
