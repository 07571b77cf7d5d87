import { randomBytes } from 'node:crypto';
import { FirestoreError, invalidArgument, unimplemented } from './errors.ts';
import type { Faults } from './faults.ts';
import {
  autoId,
  type DocumentName,
  documentName,
  parseDatabaseName,
  parseDocumentName,
  parseParentName,
} from './names.ts';
import { applyProjection, executeQuery, planQuery, type QueryPlan } from './query.ts';
import {
  cloneFields,
  cloneValue,
  compareResourceNames,
  compareStrings,
  compareTimestamps,
  compareValues,
  deleteField,
  getField,
  identicalFields,
  identicalValues,
  type Micros,
  microsToTimestamp,
  normaliseTimestampValue,
  parseFieldPath,
  projectFields,
  setField,
  timestampToMicros,
} from './values.ts';
import type {
  BatchGetDocumentsRequest,
  BatchGetDocumentsResponse,
  BatchWriteRequest,
  BatchWriteResponse,
  BeginTransactionRequest,
  CommitRequest,
  CommitResponse,
  ConsistencySelector,
  CreateDocumentRequest,
  DeleteDocumentRequest,
  Document,
  Fields,
  FieldTransform,
  GetDocumentRequest,
  ListCollectionIdsRequest,
  ListCollectionIdsResponse,
  ListDocumentsRequest,
  ListDocumentsResponse,
  RollbackRequest,
  RunAggregationQueryRequest,
  RunAggregationQueryResponse,
  RunQueryRequest,
  RunQueryResponse,
  StructuredQuery,
  TransactionOptions,
  UpdateDocumentRequest,
  Value,
  Write,
  WriteResult,
} from './wire.ts';

// The one in-memory engine behind both protocols. Every method is synchronous, so each request is
// atomic with respect to every other (Node runs one at a time).

/** How long superseded versions are kept, so reads at a past `read_time` work (Firestore allows one hour). */
const HISTORY_MICROS = 60n * 60n * 1_000_000n;
/** A transaction unused this long has expired, as on Cloud Firestore. */
const TRANSACTION_IDLE_MS = 270_000;
const MAX_INT64 = (1n << 63n) - 1n;
const MIN_INT64 = -(1n << 63n);

interface Version {
  /** When this version was written (the commit time). */
  at: Micros;
  /** `null`: the document was deleted at `at`. */
  fields: Fields | null;
  createTime: Micros;
  updateTime: Micros;
}

interface DocRecord {
  name: string;
  path: string[];
  /** Oldest first; the last one is current. */
  versions: Version[];
}

/** A document as it exists at some read time. */
export interface StoredDocument {
  name: string;
  path: string[];
  fields: Fields;
  createTime: Micros;
  updateTime: Micros;
}

class DatabaseState {
  /** Collection path (`a/b/c`) -> document id -> record. */
  readonly collections = new Map<string, Map<string, DocRecord>>();

  record(path: readonly string[]): DocRecord | undefined {
    return this.collections.get(path.slice(0, -1).join('/'))?.get(path.at(-1) as string);
  }

  ensureRecord(name: string, path: string[]): DocRecord {
    const collection = path.slice(0, -1).join('/');
    let docs = this.collections.get(collection);
    if (!docs) {
      docs = new Map();
      this.collections.set(collection, docs);
    }
    const id = path.at(-1) as string;
    let record = docs.get(id);
    if (!record) {
      record = { name, path, versions: [] };
      docs.set(id, record);
    }
    return record;
  }
}

function versionAt(record: DocRecord | undefined, readTime: Micros): Version | undefined {
  if (!record) return undefined;
  for (let i = record.versions.length - 1; i >= 0; i--) {
    const v = record.versions[i] as Version;
    if (v.at <= readTime) return v;
  }
  return undefined;
}

function existingAt(record: DocRecord | undefined, readTime: Micros): StoredDocument | undefined {
  const v = versionAt(record, readTime);
  if (!record || !v || v.fields === null) return undefined;
  return {
    name: record.name,
    path: record.path,
    fields: v.fields,
    createTime: v.createTime,
    updateTime: v.updateTime,
  };
}

interface Transaction {
  id: string;
  database: string;
  readOnly: boolean;
  /** Every read of the transaction sees the database as of this time. */
  readTime: Micros;
  /** Documents read (by path), checked at commit. */
  readDocuments: Map<string, DocRecord | undefined>;
  /** Queries run, with the result they gave, re-run at commit. */
  queries: { parent: DocumentName; plan: QueryPlan; signature: string }[];
  lastUsed: number;
}

function toDocument(doc: StoredDocument, mask?: string[][]): Document {
  // Stored fields are never mutated (writes build new objects), so answers can share them.
  const fields = mask ? projectFields(doc.fields, mask) : doc.fields;
  return {
    name: doc.name,
    fields,
    createTime: microsToTimestamp(doc.createTime),
    updateTime: microsToTimestamp(doc.updateTime),
  };
}

function transactionKey(id: Buffer | undefined): string {
  return id ? id.toString('hex') : '';
}

const RESERVED_FIELD = /^__.*__$/;

/** Validates user data as Firestore does on write, normalising timestamps to microseconds. */
function validateFields(fields: Fields, depth = 0): void {
  if (depth > 20) throw invalidArgument('Document nesting depth exceeds the maximum of 20.');
  for (const [key, value] of Object.entries(fields)) {
    const vector = key === '__type__' && value.stringValue === '__vector__' && depth > 0;
    if (RESERVED_FIELD.test(key) && !vector) {
      throw invalidArgument(`Field name "${key}" is reserved.`);
    }
    validateValue(value, depth);
  }
}

function validateValue(value: Value, depth: number): void {
  const kinds = Object.keys(value);
  if (kinds.length !== 1) throw invalidArgument('A value must set exactly one value type.');
  if (value.timestampValue) value.timestampValue = normaliseTimestampValue(value.timestampValue);
  if (value.referenceValue !== undefined) parseDocumentName(value.referenceValue);
  if (value.geoPointValue) {
    const { latitude = 0, longitude = 0 } = value.geoPointValue;
    if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) throw invalidArgument('GeoPoint out of range.');
  }
  if (value.arrayValue) {
    for (const element of value.arrayValue.values ?? []) {
      if (element.arrayValue) throw invalidArgument('Cannot have an array value inside an array.');
      validateValue(element, depth + 1);
    }
  }
  if (value.mapValue) validateFields(value.mapValue.fields ?? {}, depth + 1);
}

function isNumber(value: Value | undefined): value is Value {
  return value?.integerValue !== undefined || value?.doubleValue !== undefined;
}

function asDouble(value: Value): number {
  return value.integerValue !== undefined ? Number(value.integerValue) : (value.doubleValue ?? 0);
}

function clampInt64(n: bigint): bigint {
  return n > MAX_INT64 ? MAX_INT64 : n < MIN_INT64 ? MIN_INT64 : n;
}

/** The state of one document while a commit is being applied (before anything is stored). */
interface Staged {
  record?: DocRecord;
  name: string;
  path: string[];
  fields: Fields | null;
  createTime: Micros;
  updateTime: Micros;
  changed: boolean;
}

export interface DumpedDocument {
  name: string;
  path: string;
  id: string;
  createTime: Micros;
  updateTime: Micros;
  fields: Fields;
}

export interface EngineOptions {
  faults: Faults;
}

export class Engine {
  private readonly databases = new Map<string, DatabaseState>();
  private readonly transactions = new Map<string, Transaction>();
  private readonly faults: Faults;
  /** The last time handed out, as a read time or a commit time: times only move forward. */
  private lastTime: Micros = 0n;

  constructor(options: EngineOptions) {
    this.faults = options.faults;
  }

  // ---- time ---------------------------------------------------------------------------------------

  private wallMicros(): Micros {
    return BigInt(Math.floor((performance.timeOrigin + performance.now()) * 1000));
  }

  /** A read time: everything committed so far, nothing committed later. */
  private readNow(): Micros {
    const now = this.wallMicros();
    if (now > this.lastTime) this.lastTime = now;
    return this.lastTime;
  }

  /** A commit time, strictly after every time handed out before. */
  private nextCommitTime(): Micros {
    const now = this.wallMicros();
    this.lastTime = now > this.lastTime ? now : this.lastTime + 1n;
    return this.lastTime;
  }

  // ---- state --------------------------------------------------------------------------------------

  private database(name: string): DatabaseState {
    let db = this.databases.get(name);
    if (!db) {
      db = new DatabaseState();
      this.databases.set(name, db);
    }
    return db;
  }

  /** Clears one database (`projects/{p}/databases/{d}`), or everything. */
  reset(database?: string): void {
    if (database === undefined) {
      this.databases.clear();
      this.transactions.clear();
      return;
    }
    this.databases.delete(database);
    for (const [id, tx] of this.transactions) if (tx.database === database) this.transactions.delete(id);
  }

  // ---- consistency and transactions ---------------------------------------------------------------

  private validateReadTime(readTime: Micros): Micros {
    const now = this.readNow();
    if (readTime > now) throw invalidArgument('read_time must not be in the future.');
    if (readTime < now - HISTORY_MICROS) {
      throw new FirestoreError(
        'FAILED_PRECONDITION',
        'read_time is too old: the Firestore stand-in keeps one hour of history.',
      );
    }
    return readTime;
  }

  private sweepTransactions(): void {
    const cutoff = Date.now() - TRANSACTION_IDLE_MS;
    for (const [id, tx] of this.transactions) if (tx.lastUsed < cutoff) this.transactions.delete(id);
  }

  private begin(database: string, options: TransactionOptions | undefined): Transaction {
    this.sweepTransactions();
    if (options?.readOnly && options.readWrite)
      throw invalidArgument('A transaction is read-only or read-write.');
    const readOnly = options?.readOnly !== undefined;
    const readTime =
      readOnly && options?.readOnly?.readTime
        ? this.validateReadTime(timestampToMicros(options.readOnly.readTime))
        : this.readNow();
    const id = randomBytes(16).toString('hex');
    const tx: Transaction = {
      id,
      database,
      readOnly,
      readTime,
      readDocuments: new Map(),
      queries: [],
      lastUsed: Date.now(),
    };
    this.transactions.set(id, tx);
    return tx;
  }

  private transaction(id: Buffer, database: string): Transaction {
    const tx = this.transactions.get(transactionKey(id));
    if (!tx || tx.lastUsed < Date.now() - TRANSACTION_IDLE_MS) {
      if (tx) this.transactions.delete(tx.id);
      throw invalidArgument('The referenced transaction has expired or is no longer valid.');
    }
    if (tx.database !== database) throw invalidArgument('The transaction belongs to another database.');
    tx.lastUsed = Date.now();
    return tx;
  }

  /** Works out the read time of a read request and the transaction it belongs to (or starts). */
  private consistency(
    database: string,
    request: ConsistencySelector,
  ): { readTime: Micros; tx?: Transaction; newTransaction?: Buffer } {
    const set = [request.transaction, request.newTransaction, request.readTime].filter(
      (x) => x !== undefined,
    );
    if (set.length > 1)
      throw invalidArgument('Only one of transaction, new_transaction and read_time may be set.');
    if (request.transaction) {
      const tx = this.transaction(request.transaction, database);
      return { readTime: tx.readTime, tx };
    }
    if (request.newTransaction) {
      const tx = this.begin(database, request.newTransaction);
      return { readTime: tx.readTime, tx, newTransaction: Buffer.from(tx.id, 'hex') };
    }
    if (request.readTime) return { readTime: this.validateReadTime(timestampToMicros(request.readTime)) };
    return { readTime: this.readNow() };
  }

  /** Optimistic concurrency: a transaction whose reads changed since its read time must retry. */
  private checkConflicts(tx: Transaction): void {
    const db = this.database(tx.database);
    for (const [path, readRecord] of tx.readDocuments) {
      const record = readRecord ?? db.record(path.split('/'));
      const lastChange = record?.versions.at(-1)?.at ?? 0n;
      if (lastChange > tx.readTime) {
        throw new FirestoreError(
          'ABORTED',
          `Transaction aborted: document ${record?.name ?? path} changed after the transaction read it (contention). Retry the transaction.`,
        );
      }
    }
    for (const query of tx.queries) {
      const now = this.runPlan(db, query.parent, query.plan, this.lastTime);
      if (querySignature(now.documents) !== query.signature) {
        throw new FirestoreError(
          'ABORTED',
          'Transaction aborted: the result of a query it ran changed after it ran (contention). Retry the transaction.',
        );
      }
    }
  }

  beginTransaction(request: BeginTransactionRequest): { transaction: Buffer } {
    const { database } = parseDatabaseName(request.database ?? '');
    const tx = this.begin(database, request.options);
    return { transaction: Buffer.from(tx.id, 'hex') };
  }

  rollback(request: RollbackRequest): Record<string, never> {
    const { database } = parseDatabaseName(request.database ?? '');
    if (!request.transaction?.length) throw invalidArgument('Rollback needs a transaction.');
    const tx = this.transaction(request.transaction, database);
    this.transactions.delete(tx.id);
    return {};
  }

  // ---- reads ----------------------------------------------------------------------------------------

  batchGetDocuments(request: BatchGetDocumentsRequest): BatchGetDocumentsResponse[] {
    const { database } = parseDatabaseName(request.database ?? '');
    const names = (request.documents ?? []).map((name) => parseDocumentName(name, database));
    const mask = request.mask ? (request.mask.fieldPaths ?? []).map(parseFieldPath) : undefined;
    const { readTime, tx, newTransaction } = this.consistency(database, request);
    const db = this.database(database);
    const responses: BatchGetDocumentsResponse[] = names.map((name) => {
      const record = db.record(name.path);
      if (tx && !tx.readOnly) tx.readDocuments.set(name.path.join('/'), record);
      const doc = existingAt(record, readTime);
      const fullName = documentName(database, name.path);
      return doc
        ? { found: toDocument(doc, mask), readTime: microsToTimestamp(readTime) }
        : { missing: fullName, readTime: microsToTimestamp(readTime) };
    });
    if (newTransaction) {
      if (responses[0]) responses[0].transaction = newTransaction;
      else responses.push({ transaction: newTransaction, readTime: microsToTimestamp(readTime) });
    }
    return responses;
  }

  private *candidates(db: DatabaseState, parent: DocumentName, plan: QueryPlan, readTime: Micros) {
    const prefix = parent.path;
    if (!plan.allDescendants) {
      const docs = db.collections.get([...prefix, plan.collectionId].join('/'));
      for (const record of docs?.values() ?? []) {
        const doc = existingAt(record, readTime);
        if (doc) yield doc;
      }
      return;
    }
    for (const [collection, docs] of db.collections) {
      const segments = collection.split('/');
      if (segments.length <= prefix.length) continue;
      if (!prefix.every((s, i) => segments[i] === s)) continue;
      if (plan.collectionId !== '' && segments.at(-1) !== plan.collectionId) continue;
      for (const record of docs.values()) {
        const doc = existingAt(record, readTime);
        if (doc) yield doc;
      }
    }
  }

  private runPlan(db: DatabaseState, parent: DocumentName, plan: QueryPlan, readTime: Micros) {
    return executeQuery(plan, this.candidates(db, parent, plan, readTime));
  }

  private prepareQuery(
    parentName: string | undefined,
    query: StructuredQuery | undefined,
    request: ConsistencySelector,
  ) {
    const parent = parseParentName(parentName ?? '');
    if (!query) throw invalidArgument('A structured query is required.');
    const plan = planQuery(query);
    const { readTime, tx, newTransaction } = this.consistency(parent.database, request);
    const db = this.database(parent.database);
    const result = this.runPlan(db, parent, plan, readTime);
    if (tx && !tx.readOnly) tx.queries.push({ parent, plan, signature: querySignature(result.documents) });
    return { plan, readTime, newTransaction, result };
  }

  runQuery(request: RunQueryRequest): RunQueryResponse[] {
    if (request.explainOptions) throw unimplemented('query explain (explain_options)');
    const { plan, readTime, newTransaction, result } = this.prepareQuery(
      request.parent,
      request.structuredQuery,
      request,
    );
    const time = microsToTimestamp(readTime);
    const responses: RunQueryResponse[] = result.documents.map((doc) => ({
      document: toDocument({ ...doc, fields: applyProjection(doc.fields, plan.projection) }),
      readTime: time,
    }));
    if (responses.length === 0) responses.push({ readTime: time });
    const first = responses[0] as RunQueryResponse;
    if (result.skipped > 0) first.skippedResults = result.skipped;
    if (newTransaction) first.transaction = newTransaction;
    return responses;
  }

  runAggregationQuery(request: RunAggregationQueryRequest): RunAggregationQueryResponse[] {
    if (request.explainOptions) throw unimplemented('query explain (explain_options)');
    const aggregationQuery = request.structuredAggregationQuery;
    if (!aggregationQuery) throw invalidArgument('A structured aggregation query is required.');
    const aggregations = aggregationQuery.aggregations ?? [];
    if (aggregations.length === 0)
      throw invalidArgument('An aggregation query needs at least one aggregation.');
    if (aggregations.length > 5)
      throw invalidArgument('An aggregation query supports at most 5 aggregations.');
    const aliases = aggregations.map((a, i) => a.alias || `field_${i + 1}`);
    if (new Set(aliases).size !== aliases.length)
      throw invalidArgument('Aggregation aliases must be unique.');
    for (const a of aggregations) {
      const operators = Object.keys(a).filter((k) => k !== 'alias');
      if (operators.length !== 1 || !['count', 'sum', 'avg'].includes(operators[0] as string)) {
        throw unimplemented(`the aggregation ${operators.join(', ') || '(none)'}`);
      }
    }
    const { readTime, newTransaction, result } = this.prepareQuery(
      request.parent,
      aggregationQuery.structuredQuery,
      request,
    );
    const docs = result.documents;
    const aggregateFields: Fields = {};
    aggregations.forEach((a, i) => {
      const alias = aliases[i] as string;
      if (a.count) {
        const upTo = a.count.upTo?.value === undefined ? undefined : BigInt(a.count.upTo.value);
        if (upTo !== undefined && upTo <= 0n) throw invalidArgument('count up_to must be positive.');
        const n = BigInt(docs.length);
        aggregateFields[alias] = { integerValue: String(upTo !== undefined && n > upTo ? upTo : n) };
        return;
      }
      const fieldPath = (a.sum ?? a.avg)?.field?.fieldPath;
      if (!fieldPath) throw invalidArgument('sum and avg need a field.');
      const path = parseFieldPath(fieldPath);
      const numbers = docs.map((d) => getField(d.fields, path)).filter(isNumber);
      if (a.sum) aggregateFields[alias] = sumOf(numbers);
      else
        aggregateFields[alias] =
          numbers.length === 0
            ? { nullValue: 'NULL_VALUE' }
            : { doubleValue: numbers.reduce((s, v) => s + asDouble(v), 0) / numbers.length };
    });
    const response: RunAggregationQueryResponse = {
      result: { aggregateFields },
      readTime: microsToTimestamp(readTime),
    };
    if (newTransaction) response.transaction = newTransaction;
    return [response];
  }

  listCollectionIds(request: ListCollectionIdsRequest): ListCollectionIdsResponse {
    const parent = parseParentName(request.parent ?? '');
    const readTime = request.readTime
      ? this.validateReadTime(timestampToMicros(request.readTime))
      : this.readNow();
    const db = this.database(parent.database);
    const ids = new Set<string>();
    for (const [collection, docs] of db.collections) {
      const segments = collection.split('/');
      if (segments.length <= parent.path.length) continue;
      if (!parent.path.every((s, i) => segments[i] === s)) continue;
      const id = segments[parent.path.length] as string;
      if (ids.has(id)) continue;
      if ([...docs.values()].some((record) => existingAt(record, readTime))) ids.add(id);
    }
    const sorted = [...ids]
      .sort(compareStrings)
      .filter((id) => !request.pageToken || compareStrings(id, request.pageToken) > 0);
    const pageSize = request.pageSize && request.pageSize > 0 ? request.pageSize : sorted.length;
    const page = sorted.slice(0, pageSize);
    const response: ListCollectionIdsResponse = { collectionIds: page };
    if (sorted.length > page.length) response.nextPageToken = page.at(-1) as string;
    return response;
  }

  getDocument(request: GetDocumentRequest): Document {
    const name = parseDocumentName(request.name ?? '');
    const mask = request.mask ? (request.mask.fieldPaths ?? []).map(parseFieldPath) : undefined;
    const { readTime, tx } = this.consistency(name.database, request);
    const record = this.database(name.database).record(name.path);
    if (tx && !tx.readOnly) tx.readDocuments.set(name.path.join('/'), record);
    const doc = existingAt(record, readTime);
    if (!doc) throw new FirestoreError('NOT_FOUND', `Document "${request.name}" not found.`);
    return toDocument(doc, mask);
  }

  /** ListDocuments, ordered by name; `show_missing` adds documents that only have subcollections. */
  listDocuments(request: ListDocumentsRequest): ListDocumentsResponse {
    const parent = parseParentName(request.parent ?? '');
    if (!request.collectionId) throw unimplemented('ListDocuments without a collection id');
    if (request.orderBy && request.orderBy.trim() !== '__name__') {
      throw unimplemented(`ListDocuments ordered by "${request.orderBy}" (only __name__)`);
    }
    const mask = request.mask ? (request.mask.fieldPaths ?? []).map(parseFieldPath) : undefined;
    const { readTime } = this.consistency(parent.database, request);
    const db = this.database(parent.database);
    const collection = [...parent.path, request.collectionId].join('/');
    const found = new Map<string, Document>();
    for (const record of db.collections.get(collection)?.values() ?? []) {
      const doc = existingAt(record, readTime);
      if (doc) found.set(doc.name, toDocument(doc, mask));
    }
    if (request.showMissing) {
      for (const [path, docs] of db.collections) {
        if (!path.startsWith(`${collection}/`)) continue;
        const id = path.slice(collection.length + 1).split('/')[0] as string;
        const name = documentName(parent.database, [...parent.path, request.collectionId, id]);
        if (found.has(name)) continue;
        if ([...docs.values()].some((record) => existingAt(record, readTime))) found.set(name, { name });
      }
    }
    const names = [...found.keys()]
      .sort(compareResourceNames)
      .filter((n) => !request.pageToken || compareResourceNames(n, request.pageToken) > 0);
    const pageSize = request.pageSize && request.pageSize > 0 ? request.pageSize : names.length;
    const page = names.slice(0, pageSize);
    const response: ListDocumentsResponse = { documents: page.map((n) => found.get(n) as Document) };
    if (names.length > page.length) response.nextPageToken = page.at(-1) as string;
    return response;
  }

  createDocument(request: CreateDocumentRequest): Document {
    const parent = parseParentName(request.parent ?? '');
    if (!request.collectionId) throw invalidArgument('CreateDocument needs a collection id.');
    const path = [...parent.path, request.collectionId, request.documentId || autoId()];
    const name = documentName(parent.database, path);
    this.commit({
      database: parent.database,
      writes: [
        { update: { name, fields: request.document?.fields ?? {} }, currentDocument: { exists: false } },
      ],
    });
    return this.getDocument({ name, ...(request.mask ? { mask: request.mask } : {}) });
  }

  updateDocument(request: UpdateDocumentRequest): Document {
    const name = request.document?.name ?? '';
    const { database } = parseDocumentName(name);
    const write: Write = { update: { name, fields: request.document?.fields ?? {} } };
    if (request.updateMask) write.updateMask = request.updateMask;
    if (request.currentDocument) write.currentDocument = request.currentDocument;
    this.commit({ database, writes: [write] });
    return this.getDocument({ name, ...(request.mask ? { mask: request.mask } : {}) });
  }

  deleteDocument(request: DeleteDocumentRequest): Record<string, never> {
    const name = request.name ?? '';
    const { database } = parseDocumentName(name);
    const write: Write = { delete: name };
    if (request.currentDocument) write.currentDocument = request.currentDocument;
    this.commit({ database, writes: [write] });
    return {};
  }

  // ---- writes ---------------------------------------------------------------------------------------

  commit(request: CommitRequest): CommitResponse {
    const { database } = parseDatabaseName(request.database ?? '');
    const writes = request.writes ?? [];
    let tx: Transaction | undefined;
    if (request.transaction?.length) {
      tx = this.transaction(request.transaction, database);
      // A commit ends the transaction, whatever its outcome.
      this.transactions.delete(tx.id);
      if (tx.readOnly && writes.length > 0)
        throw invalidArgument('Cannot modify entities in a read-only transaction.');
    }
    const targets = writes.map((w) => this.validateWrite(w, database));
    if (tx) this.checkConflicts(tx);
    this.refuseByFaults(targets);
    const db = this.database(database);
    const commitTime = this.nextCommitTime();
    const staged = new Map<string, Staged>();
    const writeResults = writes.map((write, i) =>
      this.applyWrite(db, staged, write, targets[i] as string[], commitTime),
    );
    this.store(db, staged.values(), commitTime);
    return { writeResults, commitTime: microsToTimestamp(commitTime) };
  }

  /** BatchWrite: each write applied on its own (not atomically), each with its own status. */
  batchWrite(request: BatchWriteRequest): BatchWriteResponse {
    const { database } = parseDatabaseName(request.database ?? '');
    const writes = request.writes ?? [];
    const targets = writes.map((w) => this.validateWrite(w, database));
    const seen = new Set<string>();
    for (const t of targets) {
      const key = t.join('/');
      if (seen.has(key)) throw invalidArgument(`BatchWrite cannot write document ${key} more than once.`);
      seen.add(key);
    }
    const db = this.database(database);
    const writeResults: WriteResult[] = [];
    const status: { code?: number; message?: string }[] = [];
    writes.forEach((write, i) => {
      try {
        const target = targets[i] as string[];
        this.refuseByFaults([target]);
        const commitTime = this.nextCommitTime();
        const staged = new Map<string, Staged>();
        const result = this.applyWrite(db, staged, write, target, commitTime);
        this.store(db, staged.values(), commitTime);
        writeResults.push(result);
        status.push({});
      } catch (error) {
        if (!(error instanceof FirestoreError)) throw error;
        writeResults.push({});
        status.push({ code: error.grpcCode, message: error.message });
      }
    });
    return { writeResults, status };
  }

  private refuseByFaults(targets: readonly string[][]): void {
    const collections = targets.filter((t) => t.length > 0).map((t) => t.slice(0, -1).join('/'));
    const refusal = this.faults.takeWriteRejection(collections);
    if (refusal) throw refusal;
  }

  /** Checks a write's shape; returns the path of the document it writes (empty for a verify). */
  private validateWrite(write: Write, database: string): string[] {
    const operations = (['update', 'delete', 'verify', 'transform'] as const).filter(
      (k) => write[k] !== undefined,
    );
    if (operations.length !== 1)
      throw invalidArgument('A write must set exactly one of update, delete or verify.');
    if (write.transform !== undefined) {
      throw unimplemented('the legacy `transform` write (send update_transforms with an update instead)');
    }
    if (!write.update && (write.updateMask || write.updateTransforms?.length)) {
      throw invalidArgument('update_mask and update_transforms can only be set with an update.');
    }
    const name = write.update?.name ?? write.delete ?? write.verify ?? '';
    const { path } = parseDocumentName(name, database);
    if (write.update) {
      validateFields(write.update.fields ?? {});
      for (const p of write.updateMask?.fieldPaths ?? []) {
        const segments = parseFieldPath(p);
        if (segments.some((s) => RESERVED_FIELD.test(s)))
          throw invalidArgument(`Field path "${p}" is reserved.`);
      }
      for (const t of write.updateTransforms ?? []) parseFieldPath(t.fieldPath ?? '');
    }
    return write.verify !== undefined ? [] : path;
  }

  private applyWrite(
    db: DatabaseState,
    staged: Map<string, Staged>,
    write: Write,
    target: string[],
    commitTime: Micros,
  ): WriteResult {
    const name = write.update?.name ?? write.delete ?? write.verify ?? '';
    const { path } = parseDocumentName(name);
    const key = path.join('/');
    let current = staged.get(key);
    if (!current) {
      const record = db.record(path);
      const latest = record?.versions.at(-1);
      const doc = latest?.fields ? latest : undefined;
      current = {
        record,
        name,
        path,
        fields: doc ? doc.fields : null,
        createTime: doc?.createTime ?? 0n,
        updateTime: doc?.updateTime ?? 0n,
        changed: false,
      };
    }
    const exists = current.fields !== null;
    const precondition = write.currentDocument;
    if (precondition?.exists === true && !exists) {
      throw new FirestoreError('NOT_FOUND', `No document to update: ${name}`);
    }
    if (precondition?.exists === false && exists) {
      throw new FirestoreError('ALREADY_EXISTS', `Document already exists: ${name}`);
    }
    if (precondition?.updateTime) {
      const required = timestampToMicros(precondition.updateTime);
      if (
        !exists ||
        compareTimestamps(microsToTimestamp(current.updateTime), precondition.updateTime) !== 0
      ) {
        throw new FirestoreError(
          'FAILED_PRECONDITION',
          exists
            ? `The stored version (${current.updateTime}) does not match the required base version (${required}) of ${name}.`
            : `No document to verify at the required base version (${required}): ${name}`,
        );
      }
    }
    if (write.verify !== undefined || target.length === 0) return {};

    if (write.delete !== undefined) {
      staged.set(key, { ...current, fields: null, changed: current.changed || exists });
      return {};
    }

    const update = write.update as Document;
    let fields: Fields;
    if (write.updateMask) {
      fields = cloneFields(current.fields ?? {});
      for (const p of write.updateMask.fieldPaths ?? []) {
        const segments = parseFieldPath(p);
        const value = getField(update.fields ?? {}, segments);
        if (value === undefined) deleteField(fields, segments);
        else setField(fields, segments, cloneValue(value));
      }
    } else {
      fields = cloneFields(update.fields ?? {});
    }
    const transformResults = (write.updateTransforms ?? []).map((t) => applyTransform(fields, t, commitTime));
    const size = documentSize(path, fields);
    if (size > MAX_DOCUMENT_BYTES) {
      throw invalidArgument(
        `Document '${name}' cannot be written because its size (${size} bytes) exceeds the maximum allowed size of ${MAX_DOCUMENT_BYTES} bytes.`,
      );
    }
    const changed = !exists || !identicalFields(current.fields ?? {}, fields);
    const next: Staged = {
      ...current,
      fields,
      createTime: exists ? current.createTime : commitTime,
      updateTime: changed ? commitTime : current.updateTime,
      changed: current.changed || changed,
    };
    staged.set(key, next);
    const result: WriteResult = { updateTime: microsToTimestamp(next.updateTime) };
    if (transformResults.length > 0) result.transformResults = transformResults;
    return result;
  }

  private store(db: DatabaseState, staged: Iterable<Staged>, commitTime: Micros): void {
    const horizon = commitTime - HISTORY_MICROS;
    for (const s of staged) {
      if (!s.changed) continue;
      const record = s.record ?? db.ensureRecord(s.name, s.path);
      record.versions.push({
        at: commitTime,
        fields: s.fields,
        createTime: s.createTime,
        updateTime: s.updateTime,
      });
      // Keep only the versions a read within the history window can still need.
      while (record.versions.length > 1 && (record.versions[1] as Version).at <= horizon)
        record.versions.shift();
    }
  }

  // ---- tests, dumps and persistence -----------------------------------------------------------------

  /** The current documents of a database, optionally only those of one collection (id or path). */
  documents(database: string, collection?: string): DumpedDocument[] {
    const db = this.databases.get(database);
    if (!db) return [];
    const now = this.readNow();
    const out: DumpedDocument[] = [];
    for (const [path, docs] of db.collections) {
      if (collection !== undefined) {
        const matches = collection.includes('/')
          ? path === collection
          : path.split('/').at(-1) === collection;
        if (!matches) continue;
      }
      for (const record of docs.values()) {
        const doc = existingAt(record, now);
        if (!doc) continue;
        out.push({
          name: doc.name,
          path: doc.path.join('/'),
          id: doc.path.at(-1) as string,
          createTime: doc.createTime,
          updateTime: doc.updateTime,
          fields: cloneFields(doc.fields),
        });
      }
    }
    return out.sort((a, b) => compareResourceNames(a.name, b.name));
  }

  databaseNames(): string[] {
    return [...this.databases.keys()].sort();
  }

  /** Loads documents (an import): they keep their create and update times. */
  load(database: string, documents: readonly Document[]): void {
    parseDatabaseName(database);
    const db = this.database(database);
    for (const d of documents) {
      const { path } = parseDocumentName(d.name ?? '', database);
      validateFields(d.fields ?? {});
      const updateTime = timestampToMicros(d.updateTime ?? {});
      const createTime = timestampToMicros(d.createTime ?? d.updateTime ?? {});
      const record = db.ensureRecord(documentName(database, path), path);
      record.versions = [{ at: updateTime, fields: cloneFields(d.fields ?? {}), createTime, updateTime }];
      if (updateTime > this.lastTime) this.lastTime = updateTime;
    }
  }
}

const MAX_DOCUMENT_BYTES = 1_048_576;

/** A document's storage size as Cloud Firestore counts it (its documented "storage size calculations"). */
function documentSize(path: readonly string[], fields: Fields): number {
  return nameSize(path) + fieldsSize(fields) + 32;
}

function nameSize(path: readonly string[]): number {
  return path.reduce((sum, segment) => sum + Buffer.byteLength(segment) + 1, 16);
}

function fieldsSize(fields: Fields): number {
  let sum = 0;
  for (const [key, value] of Object.entries(fields)) sum += Buffer.byteLength(key) + 1 + valueSize(value);
  return sum;
}

function valueSize(value: Value): number {
  if (value.stringValue !== undefined) return Buffer.byteLength(value.stringValue) + 1;
  if (value.bytesValue !== undefined) return value.bytesValue.length;
  if (value.referenceValue !== undefined) {
    return nameSize(value.referenceValue.split('/documents/')[1]?.split('/') ?? []);
  }
  if (value.geoPointValue !== undefined) return 16;
  if (value.arrayValue !== undefined)
    return (value.arrayValue.values ?? []).reduce((s, v) => s + valueSize(v), 0);
  if (value.mapValue !== undefined) return fieldsSize(value.mapValue.fields ?? {});
  if (
    value.integerValue !== undefined ||
    value.doubleValue !== undefined ||
    value.timestampValue !== undefined
  ) {
    return 8;
  }
  return 1; // null, boolean
}

function querySignature(documents: readonly StoredDocument[]): string {
  return documents.map((d) => `${d.name}@${d.updateTime}`).join('\n');
}

function sumOf(numbers: Value[]): Value {
  if (numbers.every((v) => v.integerValue !== undefined)) {
    let total = 0n;
    for (const v of numbers) total += BigInt(v.integerValue as string);
    if (total <= MAX_INT64 && total >= MIN_INT64) return { integerValue: total.toString() };
  }
  return { doubleValue: numbers.reduce((s, v) => s + asDouble(v), 0) };
}

function arrayContains(values: readonly Value[], value: Value): boolean {
  return values.some((v) => identicalValues(v, value) || (isNaNish(v) && isNaNish(value)));
}

function isNaNish(v: Value): boolean {
  return v.doubleValue !== undefined && Number.isNaN(v.doubleValue);
}

/** Applies one field transform to the document being written; returns its transform result. */
function applyTransform(fields: Fields, transform: FieldTransform, commitTime: Micros): Value {
  const path = parseFieldPath(transform.fieldPath ?? '');
  const current = getField(fields, path);
  const kinds = Object.keys(transform).filter((k) => k !== 'fieldPath');
  if (kinds.length !== 1) throw invalidArgument('A field transform must set exactly one transformation.');
  let next: Value;
  let result: Value;
  if (transform.setToServerValue !== undefined) {
    if (transform.setToServerValue !== 'REQUEST_TIME') {
      throw invalidArgument(`Unknown server value ${transform.setToServerValue}.`);
    }
    next = { timestampValue: microsToTimestamp(commitTime) };
    result = next;
  } else if (transform.increment) {
    const operand = transform.increment;
    if (!isNumber(operand)) throw invalidArgument('increment needs a number.');
    if (!isNumber(current)) next = cloneValue(operand);
    else if (current.integerValue !== undefined && operand.integerValue !== undefined) {
      next = {
        integerValue: clampInt64(BigInt(current.integerValue) + BigInt(operand.integerValue)).toString(),
      };
    } else next = { doubleValue: asDouble(current) + asDouble(operand) };
    result = next;
  } else if (transform.maximum || transform.minimum) {
    const operand = (transform.maximum ?? transform.minimum) as Value;
    if (!isNumber(operand)) throw invalidArgument('maximum and minimum need a number.');
    if (!isNumber(current)) next = cloneValue(operand);
    else if (isNaNish(current) || isNaNish(operand)) next = { doubleValue: Number.NaN };
    else {
      const c = compareValues(operand, current);
      // Equivalent values (3 and 3.0, 0 and -0.0) leave the stored value unchanged.
      next = transform.maximum
        ? c > 0
          ? cloneValue(operand)
          : current
        : c < 0
          ? cloneValue(operand)
          : current;
    }
    result = next;
  } else if (transform.appendMissingElements) {
    const values = [...(current?.arrayValue?.values ?? [])];
    for (const element of transform.appendMissingElements.values ?? []) {
      validateValue(element, 1);
      if (!arrayContains(values, element)) values.push(cloneValue(element));
    }
    next = { arrayValue: { values } };
    result = { nullValue: 'NULL_VALUE' };
  } else if (transform.removeAllFromArray) {
    const remove = transform.removeAllFromArray.values ?? [];
    const values = (current?.arrayValue?.values ?? []).filter((v) => !arrayContains(remove, v));
    next = { arrayValue: { values } };
    result = { nullValue: 'NULL_VALUE' };
  } else {
    throw unimplemented(`the field transform ${kinds[0]}`);
  }
  setField(fields, path, next);
  return result;
}
