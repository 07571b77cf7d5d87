import { gzipSync } from 'node:zlib';
import type { Plugin } from 'vite';

export interface InitialChunkReportOptions {
  /** Above this many gzip bytes of initial JavaScript the build fails. */
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
  /**
   * For an entry chunk: the chunks its entry module itself imports dynamically (the app, which
   * the entry always imports). Lazy routes and the like are imported dynamically from deeper modules and
   * are not listed, even when those modules share the entry's chunk.
   */
  deferredImports: string[];
  moduleIds: string[];
}

export interface InitialChunkFigures {
  files: { fileName: string; bytes: number; gzipBytes: number }[];
  totalBytes: number;
  totalGzipBytes: number;
  forbidden: { fileName: string; moduleId: string }[];
}

/**
 * The initial JavaScript is what the browser fetches to make the page work, on the first engagement on
 * the landing page and at once elsewhere: every entry chunk, what an entry module imports dynamically (the
 * entry always imports the app), and everything those import statically, transitively.
 * Dynamic imports from deeper down (lazy routes, the Firebase module) are left out on purpose, which
 * is the whole point of measuring it.
 */
export function measureInitialChunks(chunks: ReportChunk[], forbiddenModules: RegExp[]): InitialChunkFigures {
  const byName = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
  const initial = new Set<ReportChunk>();
  const entries = chunks.filter((chunk) => chunk.isEntry);
  const pending = [
    ...entries,
    ...entries.flatMap((entry) => entry.deferredImports.flatMap((name) => byName.get(name) ?? [])),
  ];
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

/**
 * Why the build must fail, if it must: a module that belongs in a lazy chunk reached the initial
 * JavaScript, or the initial JavaScript is over its gzip budget. Gzip at a fixed level over the same
 * output is the same number every time, so the check is deterministic and can run in `npm test`.
 */
export function budgetViolations(figures: InitialChunkFigures, options: InitialChunkReportOptions): string[] {
  const violations: string[] = [];
  if (figures.forbidden.length > 0) {
    const list = figures.forbidden.map((hit) => `  ${hit.fileName}: ${hit.moduleId}`).join('\n');
    violations.push(`modules that must load lazily ended up in the initial JavaScript:\n${list}`);
  }
  if (figures.totalGzipBytes > options.budgetBytes) {
    violations.push(
      `initial JavaScript is ${kB(figures.totalGzipBytes)} gzip (${figures.totalGzipBytes} bytes), ` +
        `over its budget of ${kB(options.budgetBytes)} (${options.budgetBytes} bytes)`,
    );
  }
  return violations;
}

/** Prints the gzip size of the initial JavaScript after every build; fails the build over budget or with a forbidden module. */
export function initialChunkReport(options: InitialChunkReportOptions): Plugin {
  return {
    name: 'goody:initial-chunk-report',
    // The client build only: a server build (the prerender's) has no initial JavaScript to speak of.
    apply: (config, env) => env.command === 'build' && !config.build?.ssr,
    generateBundle(_outputOptions, bundle) {
      const outputs = Object.values(bundle).flatMap((output) => (output.type === 'chunk' ? [output] : []));
      const chunkOf = new Map(
        outputs.flatMap((chunk) => (chunk.facadeModuleId ? [[chunk.facadeModuleId, chunk]] : [])),
      );
      // The page's entry scripts: an entry chunk's own module, or for an HTML entry the scripts it loads.
      const entryScripts = (facade: string) => {
        const info = this.getModuleInfo(facade);
        return facade.endsWith('.html') ? [...(info?.importedIds ?? [])] : [facade];
      };
      const chunks = outputs.map((chunk) => ({
        ...chunk,
        deferredImports:
          chunk.isEntry && chunk.facadeModuleId
            ? entryScripts(chunk.facadeModuleId)
                .flatMap((id) => this.getModuleInfo(id)?.dynamicallyImportedIds ?? [])
                .flatMap((id) => chunkOf.get(id)?.fileName ?? [])
            : [],
      }));
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

      const violations = budgetViolations(figures, options);
      if (violations.length > 0) this.error(violations.join('\n'));
    },
  };
}
