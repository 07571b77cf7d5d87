// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { budgetViolations, measureInitialChunks, type ReportChunk } from './initial-chunk-report';

const chunk = (fileName: string, overrides: Partial<ReportChunk> = {}): ReportChunk => ({
  fileName,
  code: `/* ${fileName} */ ${'x'.repeat(200)}`,
  isEntry: false,
  imports: [],
  deferredImports: [],
  moduleIds: [],
  ...overrides,
});

const FIREBASE = [/[\\/]node_modules[\\/]@firebase[\\/](firestore|functions)[\\/]/];

describe('measureInitialChunks', () => {
  const chunks = [
    chunk('index.js', {
      isEntry: true,
      imports: ['runtime.js'],
      deferredImports: ['client.js'],
      moduleIds: ['/src/app/main.tsx'],
    }),
    // The app, which the entry always imports once it runs: initial, with what it imports statically
    // (and not what it imports dynamically: the Firebase module, the admin page).
    chunk('client.js', { imports: ['vendor.js'], moduleIds: ['/src/app/client.tsx'] }),
    chunk('vendor.js', { imports: ['runtime.js'], moduleIds: ['/node_modules/react-dom/index.js'] }),
    chunk('runtime.js'),
    // Reached only through import() below the entry: not initial.
    chunk('firebase.js', { moduleIds: ['/node_modules/@firebase/firestore/dist/lite/index.browser.esm.js'] }),
    chunk('AdminPage.js', { imports: ['vendor.js'] }),
  ];

  it('counts the entry, what it imports dynamically, and their static imports, transitively, and nothing else', () => {
    const figures = measureInitialChunks(chunks, FIREBASE);
    expect(figures.files.map((file) => file.fileName).sort()).toEqual([
      'client.js',
      'index.js',
      'runtime.js',
      'vendor.js',
    ]);
    expect(figures.totalBytes).toBe(figures.files.reduce((sum, file) => sum + file.bytes, 0));
    expect(figures.totalGzipBytes).toBeGreaterThan(0);
    expect(figures.totalGzipBytes).toBeLessThan(figures.totalBytes);
    expect(figures.forbidden).toEqual([]);
  });

  it('fails over the gzip budget, and at or under it only for a forbidden module', () => {
    const figures = measureInitialChunks(chunks, FIREBASE);
    const options = (budgetBytes: number) => ({ budgetBytes, forbiddenModules: FIREBASE });
    expect(budgetViolations(figures, options(figures.totalGzipBytes))).toEqual([]);
    expect(budgetViolations(figures, options(figures.totalGzipBytes - 1))).toEqual([
      expect.stringMatching(/^initial JavaScript is .* over its budget of /),
    ]);
    const leaky = {
      ...figures,
      forbidden: [{ fileName: 'vendor.js', moduleId: '/node_modules/@firebase/x' }],
    };
    expect(budgetViolations(leaky, options(figures.totalGzipBytes))).toEqual([
      expect.stringContaining('vendor.js: /node_modules/@firebase/x'),
    ]);
  });

  it('reports a forbidden module that a static import drags into the initial JavaScript', () => {
    const leaky = chunks.map((c) =>
      c.fileName === 'vendor.js' ? { ...c, imports: ['runtime.js', 'firebase.js'] } : c,
    );
    expect(measureInitialChunks(leaky, FIREBASE).forbidden).toEqual([
      {
        fileName: 'firebase.js',
        moduleId: '/node_modules/@firebase/firestore/dist/lite/index.browser.esm.js',
      },
    ]);
  });
});
