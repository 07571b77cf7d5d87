import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin, type ResolvedConfig } from 'vite';
import { backendOrigins, readFirebaseSettings } from '../src/lib/settings.ts';
import {
  assertPolicyAllowsBootstrap,
  BOOTSTRAP_HASH_SOURCE,
  type BundleChunk,
  chunksLoadedBy,
  chunksOfModule,
  withBootstrap,
} from './landing-bootstrap.ts';

export interface PrerenderOptions {
  /** The server entry, relative to the Vite root. It exports `render(url)` returning `{ html, head }`. */
  entry: string;
  /** The route written, prerendered, to index.html. */
  route: string;
  /**
   * The HTML file written beside index.html with an empty #root: the app shell that firebase.json's SPA
   * rewrite serves for every other route, which render on the client.
   */
  shellFile: string;
  /**
   * The firebase.json whose Content-Security-Policy serves the page, relative to the Vite root. The
   * prerendered page starts its entry script from an inline bootstrap that the policy allows by its hash
   * (./landing-bootstrap.ts); the build fails unless the policy has that hash.
   */
  policyFile: string;
  /**
   * The module a captured sign-up needs next (the Firebase module), relative to the Vite root: its chunks
   * are requested together with the app when a submit is captured before the app has arrived.
   */
  backendModule: string;
  /**
   * The module the entry loads on the prerendered page (the islands: the parts that hydrate), relative to
   * the Vite root: its chunks are modulepreloaded when the visitor engages, all in one round trip.
   */
  islandsModule: string;
}

export interface PrerenderedPage {
  html: string;
  head: string;
}

const EMPTY_ROOT = '<div id="root"></div>';

/**
 * Puts a prerendered page into the HTML Vite built: the markup inside #root and its style elements at
 * the end of <head>. Scripts stay as Vite wrote them (the bootstrap is a separate step, withBootstrap).
 */
export function injectPrerendered(template: string, page: PrerenderedPage): string {
  const roots = template.split(EMPTY_ROOT).length - 1;
  if (roots !== 1) throw new Error(`the built HTML should have one empty ${EMPTY_ROOT}, found ${roots}`);
  if (!template.includes('</head>')) throw new Error('the built HTML has no </head>');
  if (page.html.trim() === '') throw new Error('the prerender produced no markup');
  // Functions as replacements, so `$&` and friends in the page are not read as patterns.
  return template
    .replace('</head>', () => `${page.head}\n  </head>`)
    .replace(EMPTY_ROOT, () => `<div id="root">${page.html}</div>`);
}

/**
 * Prerenders one route at build time: after the client build, builds the server entry with the same
 * config (aliases, env, mode) into a temporary directory, renders the route there, writes the result to
 * index.html, its entry script started by the bootstrap when the visitor engages, and the untouched HTML to
 * the app shell. A render that throws, or a policy that would block the bootstrap, fails the build.
 */
export function prerender(options: PrerenderOptions): Plugin {
  let config: ResolvedConfig;
  return {
    name: 'goody:prerender',
    // Only the client build; the nested server build loads this config too and must not recurse.
    apply: (userConfig, env) => env.command === 'build' && !userConfig.build?.ssr,
    configResolved(resolved) {
      config = resolved;
    },
    // writeBundle, not closeBundle: it runs only once the client build has succeeded and is on disk.
    writeBundle: {
      order: 'post',
      sequential: true,
      async handler(_outputOptions, bundle) {
        const outDir = path.resolve(config.root, config.build.outDir);
        assertPolicyAllowsBootstrap(readFileSync(path.resolve(config.root, options.policyFile), 'utf8'));
        const serverDir = mkdtempSync(path.join(os.tmpdir(), 'goody-prerender-'));
        try {
          await build({
            configFile: config.configFile,
            root: config.root,
            mode: config.mode,
            logLevel: 'warn',
            // Bundled whole, so the server render runs the same module instances (React, Emotion) as one.
            ssr: { noExternal: true },
            build: {
              ssr: options.entry,
              outDir: serverDir,
              emptyOutDir: true,
              sourcemap: false,
              minify: false,
              copyPublicDir: false,
              rolldownOptions: {
                output: { entryFileNames: '[name].mjs', chunkFileNames: '[name]-[hash].mjs' },
              },
            },
          });
          const entryName = path.basename(options.entry).replace(/\.[cm]?[jt]sx?$/, '');
          const server = (await import(pathToFileURL(path.join(serverDir, `${entryName}.mjs`)).href)) as {
            render: (url: string) => PrerenderedPage;
          };
          const template = readFileSync(path.join(outDir, 'index.html'), 'utf8');
          const page = server.render(options.route);
          const chunks = Object.values(bundle).flatMap((output) =>
            output.type === 'chunk' ? [output as BundleChunk] : [],
          );
          const preload = chunksLoadedBy(
            chunks,
            path.resolve(config.root, options.islandsModule),
            config.base,
          );
          const backend = chunksOfModule(
            chunks,
            path.resolve(config.root, options.backendModule),
            preload,
            config.base,
          );
          writeFileSync(path.join(outDir, options.shellFile), template);
          writeFileSync(
            path.join(outDir, 'index.html'),
            withBootstrap(
              injectPrerendered(template, page),
              preload,
              backend,
              backendOrigins(readFirebaseSettings(config.env)),
            ),
          );
          config.logger.info(
            `[goody:prerender] ${options.route} prerendered into index.html ` +
              `(${(Buffer.byteLength(page.html) / 1024).toFixed(1)} kB markup, ` +
              `${(Buffer.byteLength(page.head) / 1024).toFixed(1)} kB critical CSS, entry started on engagement ` +
              `by the bootstrap ${BOOTSTRAP_HASH_SOURCE}, ${preload.length} chunks preloaded on engagement); ` +
              `app shell: ${options.shellFile}`,
          );
        } finally {
          rmSync(serverDir, { recursive: true, force: true });
        }
      },
    },
  };
}
