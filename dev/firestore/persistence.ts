import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Engine } from './engine.ts';
import { fromRestJson, toRestJson } from './protos.ts';
import { microsToTimestamp } from './values.ts';
import type { Document } from './wire.ts';

// Persistence like firebase-tools' --import / --export-on-exit, as a directory of JSON: one file per
// database, each document in the API's own proto3 JSON form (so every value type round-trips exactly).
//
//   <dir>/firestore_stand_in/metadata.json
//   <dir>/firestore_stand_in/<project>.<database>.json

const SUBDIR = 'firestore_stand_in';
const FORMAT = 'goody-firestore-stand-in-export';
const VERSION = 1;

interface Metadata {
  format: typeof FORMAT;
  version: number;
  exportedAt: string;
  databases: { database: string; file: string; documents: number }[];
}

interface DatabaseFile {
  database: string;
  documents: unknown[];
}

function fileNameFor(database: string): string {
  const m = /^projects\/([^/]+)\/databases\/([^/]+)$/.exec(database);
  if (!m) throw new Error(`Invalid database name ${database}`);
  return `${encodeURIComponent(m[1] as string)}.${encodeURIComponent(m[2] as string)}.json`;
}

async function writeAtomically(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

/** Writes every database's current documents under `dir`; returns how many documents were written. */
export async function exportData(engine: Engine, dir: string): Promise<number> {
  const target = path.join(dir, SUBDIR);
  await mkdir(target, { recursive: true });
  const metadata: Metadata = {
    format: FORMAT,
    version: VERSION,
    exportedAt: new Date().toISOString(),
    databases: [],
  };
  let total = 0;
  for (const database of engine.databaseNames()) {
    const documents = engine.documents(database).map((d) =>
      toRestJson('Document', {
        name: d.name,
        fields: d.fields,
        createTime: microsToTimestamp(d.createTime),
        updateTime: microsToTimestamp(d.updateTime),
      }),
    );
    if (documents.length === 0) continue;
    const file = fileNameFor(database);
    const content: DatabaseFile = { database, documents };
    await writeAtomically(path.join(target, file), `${JSON.stringify(content, null, 1)}\n`);
    metadata.databases.push({ database, file, documents: documents.length });
    total += documents.length;
  }
  // Files of databases that are now empty must not come back on the next import.
  const keep = new Set(metadata.databases.map((d) => d.file));
  for (const entry of await readdir(target)) {
    if (entry.endsWith('.json') && entry !== 'metadata.json' && !keep.has(entry))
      await rm(path.join(target, entry));
  }
  await writeAtomically(path.join(target, 'metadata.json'), `${JSON.stringify(metadata, null, 2)}\n`);
  return total;
}

/**
 * Loads an export written by exportData. A directory without an export loads nothing (so the same
 * directory can be passed to --import and --export-on-exit on a first run); a missing directory is an
 * error, as with firebase-tools.
 */
export async function importData(engine: Engine, dir: string): Promise<number> {
  if (!existsSync(dir) || !(await stat(dir)).isDirectory()) {
    throw new Error(`Firestore stand-in: the import directory ${dir} does not exist.`);
  }
  const metadataFile = path.join(dir, SUBDIR, 'metadata.json');
  if (!existsSync(metadataFile)) return 0;
  const metadata = JSON.parse(await readFile(metadataFile, 'utf8')) as Metadata;
  if (metadata.format !== FORMAT || metadata.version !== VERSION) {
    throw new Error(`Firestore stand-in: ${metadataFile} is not an export this version can read.`);
  }
  let total = 0;
  for (const entry of metadata.databases) {
    const content = JSON.parse(await readFile(path.join(dir, SUBDIR, entry.file), 'utf8')) as DatabaseFile;
    const documents = content.documents.map((json) => fromRestJson<Document>('Document', json));
    engine.load(content.database, documents);
    total += documents.length;
  }
  return total;
}
