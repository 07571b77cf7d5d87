import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, loadEnv } from 'vite';
import { contentSecurityPolicy } from './plugins/content-security-policy.ts';
import { hostingFunctionRewrites } from './plugins/hosting-rewrites.ts';
import { initialChunkReport } from './plugins/initial-chunk-report.ts';
import { prerender } from './plugins/prerender.ts';
import { siteOrigin, siteOriginPlugin } from './plugins/site-origin.ts';

export const srcDir = fileURLToPath(new URL('./src', import.meta.url));

export default defineConfig(({ mode }) => ({
  plugins: [
    react(),
    // Absolute URLs for the link preview (og:url, og:image) from one configurable origin.
    siteOriginPlugin(
      siteOrigin(loadEnv(mode, fileURLToPath(new URL('.', import.meta.url)), 'VITE_').VITE_SITE_ORIGIN),
    ),
    initialChunkReport({
      // docs/architecture.md, Quality bars: the landing page ships at most 160 kB of gzip JavaScript up front.
      budgetBytes: 160 * 1024,
      // docs/architecture.md, Web: the Firestore and Functions SDKs load lazily, never with the first paint.
      forbiddenModules: [/[\\/]node_modules[\\/]@firebase[\\/](firestore|functions)[\\/]/],
    }),
    // The landing page is served as HTML that paints without JavaScript, then hydrates its forms and toasts
    // (src/app/islands.tsx); every other
    // route renders on the client from the app shell (firebase.json's rewrite).
    // Its entry script is started by an inline bootstrap that firebase.json's policy allows by hash.
    // The policy this build serves (firebase.json's, plus App Check's sources when built with a site key),
    // written beside the site for the deploy and the local stack to serve.
    contentSecurityPolicy({ policyFile: '../firebase.json' }),
    // The dev server (npm run dev) has no Hosting: it makes firebase.json's rewrites to a function itself.
    hostingFunctionRewrites({ firebaseJson: '../firebase.json' }),
    prerender({
      entry: 'src/app/prerender.tsx',
      route: '/',
      shellFile: 'shell.html',
      policyFile: '../firebase.json',
      backendModule: 'src/lib/firebase.ts',
      islandsModule: 'src/app/islands.tsx',
    }),
  ],
  resolve: {
    alias: { '@': srcDir },
  },
  build: {
    target: 'es2022',
    sourcemap: true,
    rolldownOptions: {
      output: {
        // A chunk is named after its entry module; React DOM's is `client`, like the app's own client.tsx.
        chunkFileNames: (chunk) =>
          /[\\/]node_modules[\\/]react-dom[\\/]/.test(chunk.facadeModuleId ?? '')
            ? 'assets/react-dom-[hash].js'
            : 'assets/[name]-[hash].js',
      },
    },
  },
}));
