import { invalidArgument, unimplemented } from './errors.ts';

// Resource names: `projects/{project}/databases/{database}/documents/{collection}/{id}/...`. The stand-in
// serves one database, `projects/{its project}/databases/(default)`, as the product uses one.

const RESOURCE = /^projects\/([^/]+)\/databases\/([^/]+)(?:\/documents(?:\/(.*))?)?$/;
const RESERVED_ID = /^__.*__$/;
const MAX_NAME_BYTES = 1500;

/**
 * The path below `documents/` of a resource in `database` (empty for the root): collection, id, ... A name
 * in another project or database is refused as a feature the stand-in does not have.
 */
export function resourcePath(name: string, database: string): string[] {
  const m = RESOURCE.exec(name);
  if (!m) throw invalidArgument(`Invalid resource name "${name}".`);
  if (`projects/${m[1]}/databases/${m[2]}` !== database) {
    throw unimplemented(`several projects or databases (it serves ${database}, not ${name})`);
  }
  const path = m[3] === undefined ? [] : m[3].split('/');
  for (const segment of path) {
    if (segment === '' || segment === '.' || segment === '..' || RESERVED_ID.test(segment)) {
      throw invalidArgument(`Resource name "${name}" has an invalid path segment "${segment}".`);
    }
  }
  return path;
}

/** A document's path in `database`, checked. */
export function documentPath(name: string, database: string): string[] {
  const path = resourcePath(name, database);
  if (path.length === 0 || path.length % 2 !== 0) throw invalidArgument(`"${name}" is not a document name.`);
  if (Buffer.byteLength(path.join('/')) > MAX_NAME_BYTES) {
    throw invalidArgument(`Document name "${name}" is longer than ${MAX_NAME_BYTES} bytes.`);
  }
  return path;
}

/** The parent of a query: the database root or a document. */
export function parentPath(name: string, database: string): string[] {
  const path = resourcePath(name, database);
  if (path.length % 2 !== 0) throw invalidArgument(`Invalid parent "${name}": the root or a document.`);
  return path;
}
