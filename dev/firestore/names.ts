import { randomInt } from 'node:crypto';
import { invalidArgument } from './errors.ts';

// Resource names: `projects/{project}/databases/{database}/documents/{collection}/{id}/...`.

export interface DocumentName {
  /** `projects/{project}/databases/{database}` */
  database: string;
  projectId: string;
  databaseId: string;
  /** Path segments below `documents/`: collection, id, collection, id, ... */
  path: string[];
}

const RESERVED_ID = /^__.*__$/;

function validateSegment(segment: string, full: string): void {
  if (segment === '' || segment === '.' || segment === '..') {
    throw invalidArgument(`Resource name "${full}" has an invalid path segment "${segment}".`);
  }
  if (RESERVED_ID.test(segment)) {
    throw invalidArgument(`Resource id "${segment}" is invalid because it is reserved.`);
  }
}

/** Parses `projects/{p}/databases/{d}` and returns its parts. */
export function parseDatabaseName(name: string): { database: string; projectId: string; databaseId: string } {
  const m = /^projects\/([^/]+)\/databases\/([^/]+)$/.exec(name);
  if (!m)
    throw invalidArgument(
      `Invalid database name "${name}"; expected projects/{project}/databases/{database}.`,
    );
  return { database: name, projectId: m[1] as string, databaseId: m[2] as string };
}

/**
 * Parses a parent resource (the root `.../documents` or a document below it): the form RunQuery,
 * RunAggregationQuery and ListCollectionIds take.
 */
export function parseParentName(name: string): DocumentName {
  const m = /^(projects\/([^/]+)\/databases\/([^/]+))\/documents(?:\/(.*))?$/.exec(name);
  if (!m) throw invalidArgument(`Invalid parent resource "${name}".`);
  const path = m[4] === undefined ? [] : m[4].split('/');
  for (const segment of path) validateSegment(segment, name);
  if (path.length % 2 !== 0) {
    throw invalidArgument(
      `Invalid parent resource "${name}": a parent must be the database root or a document.`,
    );
  }
  return { database: m[1] as string, projectId: m[2] as string, databaseId: m[3] as string, path };
}

const MAX_NAME_BYTES = 1500;

/** Parses a document resource name; `database` (when given) must match. */
export function parseDocumentName(name: string, database?: string): DocumentName {
  const parsed = parseParentName(name);
  if (parsed.path.length === 0) {
    throw invalidArgument(`Document name "${name}" has no document path.`);
  }
  if (Buffer.byteLength(parsed.path.join('/')) > MAX_NAME_BYTES) {
    throw invalidArgument(`Document name "${name}" is longer than ${MAX_NAME_BYTES} bytes.`);
  }
  if (database !== undefined && parsed.database !== database) {
    throw invalidArgument(`Document "${name}" is not in database "${database}".`);
  }
  return parsed;
}

export function documentName(database: string, path: readonly string[]): string {
  return `${database}/documents/${path.join('/')}`;
}

const AUTO_ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A 20-character automatic document id, as the SDKs and the service generate them. */
export function autoId(): string {
  let id = '';
  for (let i = 0; i < 20; i++) id += AUTO_ID_ALPHABET[randomInt(AUTO_ID_ALPHABET.length)];
  return id;
}
