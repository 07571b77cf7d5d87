import { gzipSync } from 'node:zlib';
import type { Plugin } from 'vite';

export interface InitialChunkReportOptions {
  /** Above this many gzip bytes of initial JavaScript the build warns. */
  budgetBytes: number;
  /** Module ids that must never be part of the initial JavaScript; the build fails if one is. */
  forbiddenModules: RegExp[];
}

/** The parts of an output chunk the report reads (rolldown's OutputChunk has more). */
export interface ReportChunk {
  fileName: string;
  code: string;
  isEntry: boolean;
  imports: string[];
  moduleIds: string[];
}

export interface InitialChunkFigures {
  files: { fileName: string; bytes: number; gzipBytes: number }[];
  totalBytes: number;
  totalGzipBytes: number;
  forbidden: { fileName: string; moduleId: string }[];
}

/**
 * The initial JavaScript is what the browser must fetch before the page runs: every entry chunk plus
 * everything it imports statically, transitively. Dynamic imports (lazy routes, the Firebase module)
 * are left out on purpose, which is the whole point of measuring it.
 */
export function measureInitialChunks(chunks: ReportChunk[], forbiddenModules: RegExp[]): InitialChunkFigures {
  const byName = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
  const initial = new Set<ReportChunk>();
  const pending = chunks.filter((chunk) => chunk.isEntry);
  for (let chunk = pending.pop(); chunk; chunk = pending.pop()) {
    if (initial.has(chunk)) continue;
    initial.add(chunk);
    for (const name of chunk.imports) {
      const imported = byName.get(name);
      if (imported) pending.push(imported);
    }
  }

  const files = [...initial].map((chunk) => ({
    fileName: chunk.fileName,
    bytes: Buffer.byteLength(chunk.code),
    gzipBytes: gzipSync(chunk.code, { level: 9 }).length,
  }));
  const forbidden = [...initial].flatMap((chunk) =>
    chunk.moduleIds
      .filter((moduleId) => forbiddenModules.some((pattern) => pattern.test(moduleId)))
      .map((moduleId) => ({ fileName: chunk.fileName, moduleId })),
  );
  return {
    files,
    totalBytes: files.reduce((sum, file) => sum + file.bytes, 0),
    totalGzipBytes: files.reduce((sum, file) => sum + file.gzipBytes, 0),
    forbidden,
  };
}

const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

/** Prints the gzip size of the initial JavaScript after every build and guards what it may contain. */
export function initialChunkReport(options: InitialChunkReportOptions): Plugin {
  return {
    name: 'goody:initial-chunk-report',
    apply: 'build',
    generateBundle(_outputOptions, bundle) {
      const chunks = Object.values(bundle).flatMap((output) => (output.type === 'chunk' ? [output] : []));
      const figures = measureInitialChunks(chunks, options.forbiddenModules);

      const lines = figures.files.map(
        (file) => `  ${file.fileName}  ${kB(file.bytes)} (gzip ${kB(file.gzipBytes)})`,
      );
      this.info(
        [
          `initial JavaScript: ${kB(figures.totalBytes)}, gzip ${kB(figures.totalGzipBytes)} ` +
            `(${figures.totalGzipBytes} bytes; budget ${kB(options.budgetBytes)})`,
          ...lines,
        ].join('\n'),
      );

      if (figures.forbidden.length > 0) {
        const list = figures.forbidden.map((hit) => `  ${hit.fileName}: ${hit.moduleId}`).join('\n');
        this.error(`modules that must load lazily ended up in the initial JavaScript:\n${list}`);
      }
      if (figures.totalGzipBytes > options.budgetBytes) {
        this.warn(
          `initial JavaScript is ${kB(figures.totalGzipBytes)} gzip, over the ${kB(options.budgetBytes)} budget`,
        );
      }
    },
  };
}
