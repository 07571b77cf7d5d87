// Reference (b): the same app built the naive way, as a plain client-rendered SPA whose entry imports the
// full Firestore SDK eagerly. Built from web/'s sources with an alias switch, into a directory of our choice;
// no copy of the app is kept.
import path from 'node:path';
import react from '@vitejs/plugin-react';
import { build, type Plugin } from 'vite';
import { webDir } from '../paths.ts';

const entry = path.join(webDir, 'src', 'app', 'main.tsx');

/** Puts the Firebase module (and with it the SDKs) into the entry's static imports. */
function eagerFirebase(): Plugin {
  return {
    name: 'bench:eager-firebase',
    transform(code, id) {
      if (path.resolve(id.split('?')[0] as string) !== entry) return null;
      return { code: `import '@/lib/firebase';\n${code}`, map: null };
    },
  };
}

export async function buildNaive(outDir: string): Promise<void> {
  await build({
    configFile: false,
    root: webDir,
    // Its warnings (a 500 kB chunk, an ineffective dynamic import) are the point of the reference.
    logLevel: 'error',
    plugins: [react(), eagerFirebase()],
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
