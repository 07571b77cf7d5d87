// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { measureInitialChunks, type ReportChunk } from './initial-chunk-report';

const chunk = (fileName: string, overrides: Partial<ReportChunk> = {}): ReportChunk => ({
  fileName,
  code: `/* ${fileName} */ ${'x'.repeat(200)}`,
  isEntry: false,
  imports: [],
  moduleIds: [],
  ...overrides,
});

const FIREBASE = [/[\\/]node_modules[\\/]@firebase[\\/](firestore|functions)[\\/]/];

describe('measureInitialChunks', () => {
  const chunks = [
    chunk('index.js', { isEntry: true, imports: ['vendor.js'], moduleIds: ['/src/app/main.tsx'] }),
    chunk('vendor.js', { imports: ['runtime.js'], moduleIds: ['/node_modules/react-dom/index.js'] }),
    chunk('runtime.js'),
    // Reached only through import(): not initial.
    chunk('firebase.js', { moduleIds: ['/node_modules/@firebase/firestore/dist/lite/index.browser.esm.js'] }),
    chunk('AdminPage.js', { imports: ['vendor.js'] }),
  ];

  it('counts the entry and everything it imports statically, transitively, and nothing else', () => {
    const figures = measureInitialChunks(chunks, FIREBASE);
    expect(figures.files.map((file) => file.fileName).sort()).toEqual([
      'index.js',
      'runtime.js',
      'vendor.js',
    ]);
    expect(figures.totalBytes).toBe(figures.files.reduce((sum, file) => sum + file.bytes, 0));
    expect(figures.totalGzipBytes).toBeGreaterThan(0);
    expect(figures.totalGzipBytes).toBeLessThan(figures.totalBytes);
    expect(figures.forbidden).toEqual([]);
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
