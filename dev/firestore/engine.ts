import { randomBytes } from 'node:crypto';
import { FirestoreError, invalidArgument, unimplemented } from './errors.ts';
import type { Faults } from './faults.ts';
import { documentPath, parentPath } from './names.ts';
import { executeQuery, planQuery } from './query.ts';
import {
  cloneFields,
  cloneValue,
  compareResourceNames,
  deleteField,
  getField,
  identicalFields,
  type Micros,
  microsToTimestamp,
  normaliseTimestampValue,
  parseFieldPath,
  setField,
  timestampToMicros,
} from './values.ts';
import type {
  BatchGetDocumentsRequest,
  BatchGetDocumentsResponse,
  BeginTransactionRequest,
  CommitRequest,
  CommitResponse,
  ConsistencySelector,
  Document,
  Fields,
  RollbackRequest,
  RunAggregationQueryRequest,
  RunAggregationQueryResponse,
  RunQueryRequest,
  RunQueryResponse,
  StructuredQuery,
  TransactionOptions,
  Value,
  Write,
  WriteResult,
} from './wire.ts';

// The one in-memory database behind both protocols. Every method is synchronous, so each request is atomic
// with respect to every other (Node runs one at a time). It keeps the current version of each document only.

/** A transaction unused this long has expired, as on Cloud Firestore. */
const TRANSACTION_IDLE_MS = 270_000;
const MAX_DOCUMENT_BYTES = 1_048_576;
const RESERVED_FIELD = /^__.*__$/;

export interface StoredDocument {
  name: string;
  path: string[];
  fields: Fields;
  createTime: Micros;
  updateTime: Micros;
}

interface Transaction {
  id: string;
  /** A document it read that changed after this aborts its commit (optimistic concurrency). */
  beganAt: Micros;
  readPaths: Set<string>;
  lastUsed: number;
}

function toDocument(doc: StoredDocument): Document {
  // Stored fields are never mutated (writes build new objects), so answers can share them.
  return {
    name: doc.name,
    fields: doc.fields,
    createTime: microsToTimestamp(doc.createTime),
    updateTime: microsToTimestamp(doc.updateTime),
  };
}

/** Validates user data as Firestore does on write, normalising timestamps to microseconds. */
function validateFields(fields: Fields, depth = 0): void {
  if (depth > 20) throw invalidArgument('Document nesting depth exceeds the maximum of 20.');
  for (const [key, value] of Object.entries(fields)) {
    if (RESERVED_FIELD.test(key)) throw invalidArgument(`Field name "${key}" is reserved.`);
    validateValue(value, depth);
  }
}

function validateValue(value: Value, depth: number): void {
  if (Object.keys(value).length !== 1) throw invalidArgument('A value must set exactly one value type.');
  if (value.timestampValue) value.timestampValue = normaliseTimestampValue(value.timestampValue);
  for (const element of value.arrayValue?.values ?? []) {
    if (element.arrayValue) throw invalidArgument('Cannot have an array value inside an array.');
    validateValue(element, depth + 1);
  }
  if (value.mapValue) validateFields(value.mapValue.fields ?? {}, depth + 1);
}

/** A document's storage size as Cloud Firestore counts it (its documented "storage size calculations"). */
function documentSize(path: readonly string[], fields: Fields): number {
  const nameSize = path.reduce((sum, segment) => sum + Buffer.byteLength(segment) + 1, 16);
  const fieldsSize = (f: Fields): number =>
    Object.entries(f).reduce((sum, [key, v]) => sum + Buffer.byteLength(key) + 1 + valueSize(v), 0);
  const valueSize = (v: Value): number => {
    if (v.stringValue !== undefined) return Buffer.byteLength(v.stringValue) + 1;
    if (v.referenceValue !== undefined) return Buffer.byteLength(v.referenceValue) + 1;
    if (v.bytesValue !== undefined) return v.bytesValue.length;
    if (v.arrayValue) return (v.arrayValue.values ?? []).reduce((s, e) => s + valueSize(e), 0);
    if (v.mapValue) return fieldsSize(v.mapValue.fields ?? {});
    if (v.geoPointValue) return 16;
    return 'nullValue' in v || 'booleanValue' in v ? 1 : 8;
  };
  return nameSize + fieldsSize(fields) + 32;
}

export class Engine {
  /** Collection path (`a/b/c`) -> document id -> document. */
  private collections = new Map<string, Map<string, StoredDocument>>();
  /** When each document path last changed (written or deleted), for the transactions' conflict check. */
  private changedAt = new Map<string, Micros>();
  private transactions = new Map<string, Transaction>();
  /** The last time handed out, as a read time or a commit time: times only move forward. */
  private lastTime: Micros = 0n;

  constructor(
    /** `projects/{p}/databases/(default)`: the one database served. */
    readonly database: string,
    private readonly faults: Faults,
  ) {}

  private wall(): Micros {
    return BigInt(Math.floor((performance.timeOrigin + performance.now()) * 1000));
  }

  /** A read time: everything committed so far, nothing committed later. */
  private now(): Micros {
    const wall = this.wall();
    if (wall > this.lastTime) this.lastTime = wall;
    return this.lastTime;
  }

  /** A commit time, strictly after every time handed out before. */
  private nextCommitTime(): Micros {
    const wall = this.wall();
    this.lastTime = wall > this.lastTime ? wall : this.lastTime + 1n;
    return this.lastTime;
  }

  private get(path: readonly string[]): StoredDocument | undefined {
    return this.collections.get(path.slice(0, -1).join('/'))?.get(path.at(-1) as string);
  }

  reset(): void {
    this.collections.clear();
    this.changedAt.clear();
    this.transactions.clear();
  }

  // ---- transactions ---------------------------------------------------------------------------------

  private begin(options: TransactionOptions | undefined): Transaction {
    if (options?.readOnly) throw unimplemented('read-only transactions');
    const cutoff = Date.now() - TRANSACTION_IDLE_MS;
    for (const [id, tx] of this.transactions) if (tx.lastUsed < cutoff) this.transactions.delete(id);
    const tx = { id: randomBytes(16).toString('hex'), beganAt: this.now(), readPaths: new Set<string>() };
    this.transactions.set(tx.id, { ...tx, lastUsed: Date.now() });
    return this.transactions.get(tx.id) as Transaction;
  }

  private transaction(id: Buffer): Transaction {
    const tx = this.transactions.get(id.toString('hex'));
    if (!tx || tx.lastUsed < Date.now() - TRANSACTION_IDLE_MS) {
      throw invalidArgument('The referenced transaction has expired or is no longer valid.');
    }
    tx.lastUsed = Date.now();
    return tx;
  }

  /** The transaction a read request belongs to (or starts); reads at a past time are not served. */
  private consistency(request: ConsistencySelector): { tx?: Transaction; started?: Buffer } {
    if (request.readTime) throw unimplemented('reads at a past read_time');
    if (request.transaction && request.newTransaction) {
      throw invalidArgument('Only one of transaction and new_transaction may be set.');
    }
    if (request.transaction) return { tx: this.transaction(request.transaction) };
    if (!request.newTransaction) return {};
    const tx = this.begin(request.newTransaction);
    return { tx, started: Buffer.from(tx.id, 'hex') };
  }

  beginTransaction(request: BeginTransactionRequest): { transaction: Buffer } {
    this.checkDatabase(request.database);
    return { transaction: Buffer.from(this.begin(request.options).id, 'hex') };
  }

  rollback(request: RollbackRequest): Record<string, never> {
    this.checkDatabase(request.database);
    if (!request.transaction?.length) throw invalidArgument('Rollback needs a transaction.');
    this.transactions.delete(this.transaction(request.transaction).id);
    return {};
  }

  private checkDatabase(name: string | undefined): void {
    parentPath(`${name ?? ''}/documents`, this.database);
  }

  // ---- reads ----------------------------------------------------------------------------------------

  batchGetDocuments(request: BatchGetDocumentsRequest): BatchGetDocumentsResponse[] {
    this.checkDatabase(request.database);
    if (request.mask) throw unimplemented('field masks');
    const names = request.documents ?? [];
    const paths = names.map((name) => documentPath(name, this.database));
    const { tx, started } = this.consistency(request);
    const readTime = microsToTimestamp(this.now());
    const responses: BatchGetDocumentsResponse[] = paths.map((path, i) => {
      tx?.readPaths.add(path.join('/'));
      const doc = this.get(path);
      return doc ? { found: toDocument(doc), readTime } : { missing: names[i] as string, readTime };
    });
    if (started) {
      if (responses[0]) responses[0].transaction = started;
      else responses.push({ transaction: started, readTime });
    }
    return responses;
  }

  private query(parent: string | undefined, request: StructuredQuery) {
    const prefix = parentPath(parent ?? '', this.database);
    const plan = planQuery(request);
    const docs = this.collections.get([...prefix, plan.collectionId].join('/'))?.values() ?? [];
    return executeQuery(plan, docs);
  }

  private refuseInTransaction(request: ConsistencySelector & { explainOptions?: unknown }): void {
    if (request.explainOptions) throw unimplemented('query explain (explain_options)');
    if (request.transaction || request.newTransaction) throw unimplemented('queries inside a transaction');
    if (request.readTime) throw unimplemented('reads at a past read_time');
  }

  runQuery(request: RunQueryRequest): RunQueryResponse[] {
    this.refuseInTransaction(request);
    if (!request.structuredQuery) throw invalidArgument('A structured query is required.');
    const result = this.query(request.parent, request.structuredQuery);
    const readTime = microsToTimestamp(this.now());
    const responses: RunQueryResponse[] = result.documents.map((doc) => ({
      document: toDocument(doc),
      readTime,
    }));
    if (responses.length === 0) responses.push({ readTime });
    if (result.skipped > 0) (responses[0] as RunQueryResponse).skippedResults = result.skipped;
    return responses;
  }

  /** Counting only, the one aggregation the product runs. */
  runAggregationQuery(request: RunAggregationQueryRequest): RunAggregationQueryResponse[] {
    this.refuseInTransaction(request);
    const { aggregations = [], structuredQuery } = request.structuredAggregationQuery ?? {};
    if (!structuredQuery) throw invalidArgument('A structured aggregation query is required.');
    if (aggregations.length === 0) throw invalidArgument('An aggregation query needs an aggregation.');
    const aggregateFields: Fields = {};
    const count = this.query(request.parent, structuredQuery).documents.length;
    aggregations.forEach((a, i) => {
      const kinds = Object.keys(a).filter((k) => k !== 'alias');
      if (kinds.join() !== 'count' || a.count?.upTo) throw unimplemented(`the aggregation ${kinds.join()}`);
      aggregateFields[a.alias || `field_${i + 1}`] = { integerValue: String(count) };
    });
    return [{ result: { aggregateFields }, readTime: microsToTimestamp(this.now()) }];
  }

  // ---- writes ---------------------------------------------------------------------------------------

  commit(request: CommitRequest): CommitResponse {
    this.checkDatabase(request.database);
    const writes = request.writes ?? [];
    const tx = request.transaction?.length ? this.transaction(request.transaction) : undefined;
    // A commit ends its transaction, whatever the outcome.
    if (tx) this.transactions.delete(tx.id);
    const paths = writes.map((w) => this.validateWrite(w));
    for (const path of tx?.readPaths ?? []) {
      if ((this.changedAt.get(path) ?? 0n) > (tx as Transaction).beganAt) {
        throw new FirestoreError(
          'ABORTED',
          `Transaction aborted: document ${path} changed after the transaction read it (contention). Retry the transaction.`,
        );
      }
    }
    const written = paths.filter((p) => p.length > 0).map((p) => p.slice(0, -1).join('/'));
    const refusal = this.faults.takeWriteRejection(written);
    if (refusal) throw refusal;

    const commitTime = this.nextCommitTime();
    const staged = new Map<string, StoredDocument | null>();
    const writeResults = writes.map((write, i) =>
      this.applyWrite(staged, write, paths[i] as string[], commitTime),
    );
    for (const [key, doc] of staged) {
      const path = key.split('/');
      const collection = path.slice(0, -1).join('/');
      const before = this.get(path);
      if (doc === before || (!doc && !before)) continue;
      if (doc) {
        if (!this.collections.has(collection)) this.collections.set(collection, new Map());
        this.collections.get(collection)?.set(path.at(-1) as string, doc);
      } else {
        this.collections.get(collection)?.delete(path.at(-1) as string);
      }
      this.changedAt.set(key, commitTime);
    }
    return { writeResults, commitTime: microsToTimestamp(commitTime) };
  }

  /** Checks a write's shape; returns the path of the document it writes (empty for a verify). */
  private validateWrite(write: Write): string[] {
    const kinds = (['update', 'delete', 'verify', 'transform'] as const).filter(
      (k) => write[k] !== undefined,
    );
    if (kinds.length !== 1)
      throw invalidArgument('A write must set exactly one of update, delete or verify.');
    if (write.transform !== undefined) throw unimplemented('the legacy `transform` write');
    if (!write.update && (write.updateMask || write.updateTransforms?.length)) {
      throw invalidArgument('update_mask and update_transforms can only be set with an update.');
    }
    const path = documentPath(write.update?.name ?? write.delete ?? write.verify ?? '', this.database);
    if (write.update) validateFields(write.update.fields ?? {});
    for (const p of write.updateMask?.fieldPaths ?? []) {
      if (parseFieldPath(p).some((s) => RESERVED_FIELD.test(s))) throw invalidArgument(`"${p}" is reserved.`);
    }
    for (const t of write.updateTransforms ?? []) {
      const kind = Object.keys(t).find((k) => k !== 'fieldPath');
      if (kind !== 'setToServerValue' || t.setToServerValue !== 'REQUEST_TIME') {
        throw unimplemented(`the field transform ${kind} ${t.setToServerValue ?? ''}`.trim());
      }
      parseFieldPath(t.fieldPath ?? '');
    }
    return write.verify !== undefined ? [] : path;
  }

  private applyWrite(
    staged: Map<string, StoredDocument | null>,
    write: Write,
    target: string[],
    commitTime: Micros,
  ): WriteResult {
    const name = write.update?.name ?? write.delete ?? write.verify ?? '';
    const key = documentPath(name, this.database).join('/');
    const current = staged.has(key) ? staged.get(key) : this.get(key.split('/'));
    const { exists, updateTime } = write.currentDocument ?? {};
    if (exists === true && !current) throw new FirestoreError('NOT_FOUND', `No document to update: ${name}`);
    if (exists === false && current) {
      throw new FirestoreError('ALREADY_EXISTS', `Document already exists: ${name}`);
    }
    if (updateTime && current?.updateTime !== timestampToMicros(updateTime)) {
      throw new FirestoreError(
        'FAILED_PRECONDITION',
        `The stored version of ${name} does not match the required base version.`,
      );
    }
    if (target.length === 0) return {};
    if (write.delete !== undefined) {
      staged.set(key, null);
      return {};
    }

    const update = write.update as Document;
    let fields: Fields;
    if (write.updateMask) {
      fields = cloneFields(current?.fields ?? {});
      for (const p of write.updateMask.fieldPaths ?? []) {
        const segments = parseFieldPath(p);
        const value = getField(update.fields ?? {}, segments);
        if (value === undefined) deleteField(fields, segments);
        else setField(fields, segments, cloneValue(value));
      }
    } else {
      fields = cloneFields(update.fields ?? {});
    }
    const transformResults = (write.updateTransforms ?? []).map((t) => {
      const value = { timestampValue: microsToTimestamp(commitTime) };
      setField(fields, parseFieldPath(t.fieldPath ?? ''), value);
      return value;
    });
    const size = documentSize(target, fields);
    if (size > MAX_DOCUMENT_BYTES) {
      throw invalidArgument(
        `Document '${name}' cannot be written because its size (${size} bytes) exceeds the maximum allowed size of ${MAX_DOCUMENT_BYTES} bytes.`,
      );
    }
    // A write that changes nothing keeps the stored document and its update time, as on Firestore.
    const next =
      current && identicalFields(current.fields, fields)
        ? current
        : {
            name,
            path: target,
            fields,
            createTime: current?.createTime ?? commitTime,
            updateTime: commitTime,
          };
    staged.set(key, next);
    const result: WriteResult = { updateTime: microsToTimestamp(next.updateTime) };
    if (transformResults.length > 0) result.transformResults = transformResults;
    return result;
  }

  // ---- dumps and persistence ------------------------------------------------------------------------

  /** The documents, optionally only those of one collection (an id at any depth, or a path). */
  documents(collection?: string): StoredDocument[] {
    const out: StoredDocument[] = [];
    for (const [path, docs] of this.collections) {
      const matches =
        collection === undefined ||
        (collection.includes('/') ? path === collection : path.split('/').at(-1) === collection);
      if (matches) out.push(...docs.values());
    }
    return out.sort((a, b) => compareResourceNames(a.name, b.name));
  }

  /** Loads documents (an import): they keep their create and update times. */
  load(documents: readonly Document[]): void {
    for (const d of documents) {
      const path = documentPath(d.name ?? '', this.database);
      validateFields(d.fields ?? {});
      const updateTime = timestampToMicros(d.updateTime ?? {});
      const collection = path.slice(0, -1).join('/');
      if (!this.collections.has(collection)) this.collections.set(collection, new Map());
      this.collections.get(collection)?.set(path.at(-1) as string, {
        name: d.name as string,
        path,
        fields: d.fields ?? {},
        createTime: timestampToMicros(d.createTime ?? d.updateTime ?? {}),
        updateTime,
      });
      if (updateTime > this.lastTime) this.lastTime = updateTime;
    }
  }
}
