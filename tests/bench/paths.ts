import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { timestamp } from './stats.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const webDir = path.join(repoRoot, 'web');
export const resultsDir = path.join(repoRoot, 'bench-results');

/**
 * Writes a bench's figures as JSON to bench-results/<bench>-<timestamp>.json and <bench>-latest.json; returns
 * the JSON and the dated file's path.
 */
export function writeResults(bench: string, figures: unknown): { json: string; datedPath: string } {
  mkdirSync(resultsDir, { recursive: true });
  const json = `${JSON.stringify(figures, null, 2)}\n`;
  const datedPath = path.join(resultsDir, `${bench}-${timestamp()}.json`);
  writeFileSync(datedPath, json);
  writeFileSync(path.join(resultsDir, `${bench}-latest.json`), json);
  return { json, datedPath };
}
