// TypeScript views of the google.firestore.v1 messages the engine reads and builds, in the object form
// protos.ts decodes them to (camelCase, int64 as strings, enums as names, bytes as Buffers, unset fields
// absent). They only type the engine's code: encoding and decoding are driven by the official protos.

export interface Timestamp {
  seconds?: string;
  nanos?: number;
}

export interface LatLng {
  latitude?: number;
  longitude?: number;
}

export interface Value {
  nullValue?: 'NULL_VALUE';
  booleanValue?: boolean;
  integerValue?: string;
  doubleValue?: number;
  timestampValue?: Timestamp;
  stringValue?: string;
  bytesValue?: Buffer;
  referenceValue?: string;
  geoPointValue?: LatLng;
  arrayValue?: { values?: Value[] };
  mapValue?: { fields?: Fields };
}

export type Fields = Record<string, Value>;

export interface Document {
  name?: string;
  fields?: Fields;
  createTime?: Timestamp;
  updateTime?: Timestamp;
}

export interface DocumentMask {
  fieldPaths?: string[];
}

export interface Precondition {
  exists?: boolean;
  updateTime?: Timestamp;
}

export interface FieldTransform {
  fieldPath?: string;
  setToServerValue?: 'SERVER_VALUE_UNSPECIFIED' | 'REQUEST_TIME';
}

export interface Write {
  update?: Document;
  delete?: string;
  verify?: string;
  transform?: unknown;
  updateMask?: DocumentMask;
  updateTransforms?: FieldTransform[];
  currentDocument?: Precondition;
}

export interface WriteResult {
  updateTime?: Timestamp;
  transformResults?: Value[];
}

export interface TransactionOptions {
  readOnly?: { readTime?: Timestamp };
  readWrite?: { retryTransaction?: Buffer };
}

export interface FieldReference {
  fieldPath?: string;
}

export interface Filter {
  compositeFilter?: { op?: 'OPERATOR_UNSPECIFIED' | 'AND' | 'OR'; filters?: Filter[] };
  fieldFilter?: { field?: FieldReference; op?: string; value?: Value };
}

export interface Order {
  field?: FieldReference;
  direction?: 'DIRECTION_UNSPECIFIED' | 'ASCENDING' | 'DESCENDING';
}

export interface Cursor {
  values?: Value[];
  before?: boolean;
}

export interface StructuredQuery {
  from?: { collectionId?: string; allDescendants?: boolean }[];
  where?: Filter;
  orderBy?: Order[];
  startAt?: Cursor;
  endAt?: Cursor;
  offset?: number;
  limit?: { value?: number };
}

export interface Aggregation {
  count?: { upTo?: { value?: string } };
  alias?: string;
}

/** The read-consistency part shared by BatchGetDocuments, RunQuery and RunAggregationQuery. */
export interface ConsistencySelector {
  transaction?: Buffer;
  newTransaction?: TransactionOptions;
  readTime?: Timestamp;
}

export interface BatchGetDocumentsRequest extends ConsistencySelector {
  database?: string;
  documents?: string[];
  mask?: DocumentMask;
}

export interface BatchGetDocumentsResponse {
  found?: Document;
  missing?: string;
  transaction?: Buffer;
  readTime?: Timestamp;
}

export interface BeginTransactionRequest {
  database?: string;
  options?: TransactionOptions;
}

export interface CommitRequest {
  database?: string;
  writes?: Write[];
  transaction?: Buffer;
}

export interface CommitResponse {
  writeResults?: WriteResult[];
  commitTime?: Timestamp;
}

export interface RollbackRequest {
  database?: string;
  transaction?: Buffer;
}

export interface RunQueryRequest extends ConsistencySelector {
  parent?: string;
  structuredQuery?: StructuredQuery;
  explainOptions?: unknown;
}

export interface RunQueryResponse {
  transaction?: Buffer;
  document?: Document;
  readTime?: Timestamp;
  skippedResults?: number;
}

export interface RunAggregationQueryRequest extends ConsistencySelector {
  parent?: string;
  structuredAggregationQuery?: { structuredQuery?: StructuredQuery; aggregations?: Aggregation[] };
  explainOptions?: unknown;
}

export interface RunAggregationQueryResponse {
  result?: { aggregateFields?: Fields };
  transaction?: Buffer;
  readTime?: Timestamp;
}
