// Reference (b): the same app built the naive way, as a plain client-rendered SPA whose entry imports the app
// and the full Firestore SDK eagerly. Built from web/'s sources with an alias and an entry switch, into a
// directory of our choice; no copy of the app is kept.
import path from 'node:path';
import react from '@vitejs/plugin-react';
import { build, type Plugin } from 'vite';
import { webDir } from '../paths.ts';

const entry = path.join(webDir, 'src', 'app', 'main.tsx');

/**
 * The classic single-page-app entry in place of ours (which paints first and imports the app after):
 * the app and the Firebase module, and with it the SDKs, imported statically and started at once.
 */
function naiveEntry(): Plugin {
  return {
    name: 'bench:naive-entry',
    transform(_code, id) {
      if (path.resolve(id.split('?')[0] as string) !== entry) return null;
      return {
        code: [
          "import '@/lib/firebase';",
          "import { start } from './client';",
          "start(document.getElementById('root'));",
        ].join('\n'),
        map: null,
      };
    },
  };
}

export async function buildNaive(outDir: string): Promise<void> {
  await build({
    configFile: false,
    root: webDir,
    // Its warnings (a 500 kB chunk, an ineffective dynamic import) are the point of the reference.
    logLevel: 'error',
    plugins: [react(), naiveEntry()],
    resolve: {
      alias: [
        { find: /^@\//, replacement: `${path.join(webDir, 'src')}/` },
        // The full SDK (gRPC-web channel, persistence, listeners) in place of Firestore Lite.
        { find: /^firebase\/firestore\/lite$/, replacement: 'firebase/firestore' },
      ],
    },
    build: { outDir, emptyOutDir: true, target: 'es2022', sourcemap: false },
  });
}
