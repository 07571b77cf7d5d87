import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Engine } from './engine.ts';
import { fromRestJson, toRestJson } from './protos.ts';
import { microsToTimestamp } from './values.ts';
import type { Document } from './wire.ts';

// Persistence like firebase-tools' --import / --export-on-exit: `<dir>/firestore-stand-in.json`, each
// document in the API's own proto3 JSON form (so every value type round-trips exactly) with its times.

const FILE = 'firestore-stand-in.json';
const FORMAT = 'goody-firestore-stand-in-export/2';

interface ExportFile {
  format: typeof FORMAT;
  database: string;
  documents: unknown[];
}

/** Writes every document under `dir` (atomically); returns how many were written. */
export async function exportData(engine: Engine, dir: string): Promise<number> {
  await mkdir(dir, { recursive: true });
  const documents = engine.documents().map((d) =>
    toRestJson('Document', {
      name: d.name,
      fields: d.fields,
      createTime: microsToTimestamp(d.createTime),
      updateTime: microsToTimestamp(d.updateTime),
    }),
  );
  const content: ExportFile = { format: FORMAT, database: engine.database, documents };
  const file = path.join(dir, FILE);
  await writeFile(`${file}.${process.pid}.tmp`, `${JSON.stringify(content, null, 1)}\n`);
  await rename(`${file}.${process.pid}.tmp`, file);
  return documents.length;
}

/**
 * Loads an export written by exportData. A directory without an export loads nothing (so the same directory
 * serves --import and --export-on-exit on a first run); a missing directory is an error, as with firebase-tools.
 */
export async function importData(engine: Engine, dir: string): Promise<number> {
  if (!existsSync(dir) || !(await stat(dir)).isDirectory()) {
    throw new Error(`Firestore stand-in: the import directory ${dir} does not exist.`);
  }
  const file = path.join(dir, FILE);
  if (!existsSync(file)) return 0;
  const content = JSON.parse(await readFile(file, 'utf8')) as ExportFile;
  if (content.format !== FORMAT) throw new Error(`Firestore stand-in: ${file} is not an export it can read.`);
  if (content.database !== engine.database) {
    throw new Error(`Firestore stand-in: ${file} holds ${content.database}, not ${engine.database}.`);
  }
  engine.load(content.documents.map((json) => fromRestJson<Document>('Document', json)));
  return content.documents.length;
}
