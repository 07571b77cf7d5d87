import { invalidArgument, unimplemented } from './errors.ts';
import {
  compareResourceNames,
  compareValues,
  formatFieldPath,
  getField,
  isNaNValue,
  parseFieldPath,
  projectFields,
  typeOrder,
} from './values.ts';
import type { Cursor, Fields, Filter, StructuredQuery, Value } from './wire.ts';

// StructuredQuery semantics as Cloud Firestore defines them, checked field by field: anything the
// stand-in cannot answer exactly is refused with UNIMPLEMENTED instead of being approximated.

/** A document as a query sees it. */
export interface QueryDocument {
  name: string;
  fields: Fields;
}

/** A field path, or `null` for the document's key (`__name__`). */
type FieldKey = string[] | null;

interface Ordering {
  field: FieldKey;
  canonical: string;
  descending: boolean;
}

interface Bound {
  values: Value[];
  before: boolean;
}

export interface QueryPlan {
  collectionId: string;
  allDescendants: boolean;
  matches: (doc: QueryDocument) => boolean;
  orderings: Ordering[];
  startAt?: Bound;
  endAt?: Bound;
  offset: number;
  limit?: number;
  projection?: string[][];
}

const KEY_FIELD = '__name__';
const INEQUALITY_OPS = new Set(['LESS_THAN', 'LESS_THAN_OR_EQUAL', 'GREATER_THAN', 'GREATER_THAN_OR_EQUAL']);
const MAX_DISJUNCTION = 30;
const MAX_NOT_IN = 10;

function parseFieldKey(path: string | undefined, what: string): FieldKey {
  if (!path) throw invalidArgument(`${what} has no field path.`);
  if (path === KEY_FIELD) return null;
  return parseFieldPath(path);
}

function canonical(field: FieldKey): string {
  return field === null ? KEY_FIELD : formatFieldPath(field);
}

function fieldValue(doc: QueryDocument, field: FieldKey): Value | undefined {
  return field === null ? { referenceValue: doc.name } : getField(doc.fields, field);
}

function knownKeys(object: object, allowed: readonly string[], feature: (key: string) => string): void {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) throw unimplemented(feature(key));
  }
}

function arrayOperand(value: Value | undefined, op: string): Value[] {
  const values = value?.arrayValue?.values;
  if (!value?.arrayValue) throw invalidArgument(`A ${op} filter needs an array value.`);
  if (!values || values.length === 0) throw invalidArgument(`A ${op} filter needs a non-empty array.`);
  const max = op === 'NOT_IN' ? MAX_NOT_IN : MAX_DISJUNCTION;
  if (values.length > max) throw invalidArgument(`A ${op} filter supports at most ${max} elements.`);
  return values;
}

function isNull(value: Value | undefined): boolean {
  return value !== undefined && 'nullValue' in value;
}

/** `==` and range comparisons only match values of the operand's type (numbers mix ints and doubles). */
function comparable(docValue: Value | undefined, operand: Value): docValue is Value {
  return docValue !== undefined && typeOrder(docValue) === typeOrder(operand);
}

function equalTo(docValue: Value | undefined, operand: Value): boolean {
  return comparable(docValue, operand) && compareValues(docValue, operand) === 0;
}

interface CompiledFilter {
  matches: (doc: QueryDocument) => boolean;
  inequalityFields: FieldKey[];
}

function compileFieldFilter(filter: NonNullable<Filter['fieldFilter']>): CompiledFilter {
  knownKeys(filter, ['field', 'op', 'value'], (k) => `the field filter property "${k}"`);
  const field = parseFieldKey(filter.field?.fieldPath, 'A field filter');
  const op = filter.op ?? 'OPERATOR_UNSPECIFIED';
  const operand = filter.value;
  if (!operand) throw invalidArgument('A field filter needs a value.');
  const isKey = field === null;
  const requireReference = (v: Value) => {
    if (isKey && v.referenceValue === undefined) {
      throw invalidArgument(`A filter on ${KEY_FIELD} must compare with a document reference.`);
    }
  };
  const at = (doc: QueryDocument) => fieldValue(doc, field);

  if (op === 'EQUAL' || op === 'NOT_EQUAL' || INEQUALITY_OPS.has(op)) {
    // The SDKs send `== null`, `== NaN`, `!= null`, `!= NaN` as unary filters; a comparison with null or
    // NaN has no defined answer here.
    if (isNull(operand) || isNaNValue(operand)) {
      throw unimplemented(
        `a ${op} field filter whose operand is null or NaN (use IS_NULL / IS_NAN unary filters)`,
      );
    }
    requireReference(operand);
  }
  switch (op) {
    case 'EQUAL':
      return { matches: (doc) => equalTo(at(doc), operand), inequalityFields: [] };
    case 'NOT_EQUAL':
      return {
        matches: (doc) => {
          const v = at(doc);
          return v !== undefined && !isNull(v) && compareValues(v, operand) !== 0;
        },
        inequalityFields: [field],
      };
    case 'LESS_THAN':
    case 'LESS_THAN_OR_EQUAL':
    case 'GREATER_THAN':
    case 'GREATER_THAN_OR_EQUAL': {
      const test = {
        LESS_THAN: (c: number) => c < 0,
        LESS_THAN_OR_EQUAL: (c: number) => c <= 0,
        GREATER_THAN: (c: number) => c > 0,
        GREATER_THAN_OR_EQUAL: (c: number) => c >= 0,
      }[op];
      return {
        matches: (doc) => {
          const v = at(doc);
          return comparable(v, operand) && test(compareValues(v, operand));
        },
        inequalityFields: [field],
      };
    }
    case 'IN': {
      const values = arrayOperand(operand, op);
      values.forEach(requireReference);
      return { matches: (doc) => values.some((x) => equalTo(at(doc), x)), inequalityFields: [] };
    }
    case 'NOT_IN': {
      const values = arrayOperand(operand, op);
      values.forEach(requireReference);
      const hasNull = values.some(isNull);
      return {
        matches: (doc) => {
          const v = at(doc);
          if (hasNull || v === undefined || isNull(v)) return false;
          return !values.some((x) => compareValues(v, x) === 0);
        },
        inequalityFields: [field],
      };
    }
    case 'ARRAY_CONTAINS':
    case 'ARRAY_CONTAINS_ANY': {
      if (isKey) throw invalidArgument(`${op} cannot be used on ${KEY_FIELD}.`);
      const wanted = op === 'ARRAY_CONTAINS' ? [operand] : arrayOperand(operand, op);
      return {
        matches: (doc) => {
          const elements = at(doc)?.arrayValue ? (at(doc)?.arrayValue?.values ?? []) : undefined;
          return !!elements?.some((e) => wanted.some((w) => equalTo(e, w)));
        },
        inequalityFields: [],
      };
    }
    default:
      throw invalidArgument(`Unknown field filter operator ${op}.`);
  }
}

function compileUnaryFilter(filter: NonNullable<Filter['unaryFilter']>): CompiledFilter {
  knownKeys(filter, ['field', 'op'], (k) => `the unary filter property "${k}"`);
  const field = parseFieldKey(filter.field?.fieldPath, 'A unary filter');
  const at = (doc: QueryDocument) => fieldValue(doc, field);
  switch (filter.op) {
    case 'IS_NULL':
      return { matches: (doc) => isNull(at(doc)), inequalityFields: [] };
    case 'IS_NAN':
      return { matches: (doc) => isNaNValue(at(doc)), inequalityFields: [] };
    case 'IS_NOT_NULL':
      return {
        matches: (doc) => {
          const v = at(doc);
          return v !== undefined && !isNull(v);
        },
        inequalityFields: [field],
      };
    case 'IS_NOT_NAN':
      return {
        matches: (doc) => {
          const v = at(doc);
          return v !== undefined && !isNull(v) && !isNaNValue(v);
        },
        inequalityFields: [field],
      };
    default:
      throw invalidArgument(`Unknown unary filter operator ${filter.op}.`);
  }
}

function compileFilter(filter: Filter): CompiledFilter {
  const kinds = Object.keys(filter);
  if (kinds.length !== 1)
    throw invalidArgument('A filter must set exactly one of composite, field or unary.');
  if (filter.fieldFilter) return compileFieldFilter(filter.fieldFilter);
  if (filter.unaryFilter) return compileUnaryFilter(filter.unaryFilter);
  if (filter.compositeFilter) {
    const composite = filter.compositeFilter;
    knownKeys(composite, ['op', 'filters'], (k) => `the composite filter property "${k}"`);
    const parts = (composite.filters ?? []).map(compileFilter);
    if (parts.length === 0) throw invalidArgument('A composite filter needs at least one filter.');
    const inequalityFields = parts.flatMap((p) => p.inequalityFields);
    if (composite.op === 'AND') {
      return { matches: (doc) => parts.every((p) => p.matches(doc)), inequalityFields };
    }
    if (composite.op === 'OR') {
      return { matches: (doc) => parts.some((p) => p.matches(doc)), inequalityFields };
    }
    throw invalidArgument(`Unknown composite filter operator ${composite.op}.`);
  }
  throw invalidArgument('A filter must set exactly one of composite, field or unary.');
}

function compileCursor(cursor: Cursor | undefined, orderings: Ordering[], which: string): Bound | undefined {
  if (!cursor) return undefined;
  knownKeys(cursor, ['values', 'before'], (k) => `the cursor property "${k}"`);
  const values = cursor.values ?? [];
  if (values.length > orderings.length) {
    throw invalidArgument(
      `Too many cursor values in ${which}: the query orders by ${orderings.length} fields.`,
    );
  }
  values.forEach((v, i) => {
    if (orderings[i]?.field === null && v.referenceValue === undefined) {
      throw invalidArgument(`The ${which} cursor value for ${KEY_FIELD} must be a document reference.`);
    }
  });
  return { values, before: cursor.before === true };
}

/**
 * Validates a StructuredQuery and works out its full ordering: the explicit orderBy, then every
 * inequality field not yet ordered (in field path order), then `__name__` in the direction of the last
 * explicit order, as Cloud Firestore does.
 */
export function planQuery(query: StructuredQuery): QueryPlan {
  knownKeys(
    query,
    ['select', 'from', 'where', 'orderBy', 'startAt', 'endAt', 'offset', 'limit', 'findNearest'],
    (k) => (k === 'findNearest' ? 'vector search (findNearest)' : `the query property "${k}"`),
  );
  if (query.findNearest) throw unimplemented('vector search (findNearest)');
  const from = query.from ?? [];
  if (from.length !== 1) throw invalidArgument('A query must select exactly one collection (from).');
  const selector = from[0] ?? {};
  const collectionId = selector.collectionId ?? '';
  const allDescendants = selector.allDescendants === true;
  if (collectionId === '' && !allDescendants)
    throw invalidArgument('A collection query needs a collection id.');
  if (collectionId.includes('/')) throw invalidArgument(`Invalid collection id "${collectionId}".`);

  const filter = query.where ? compileFilter(query.where) : undefined;

  const orderings: Ordering[] = (query.orderBy ?? []).map((order) => {
    const field = parseFieldKey(order.field?.fieldPath, 'An orderBy');
    return { field, canonical: canonical(field), descending: order.direction === 'DESCENDING' };
  });
  const ordered = new Set(orderings.map((o) => o.canonical));
  const unordered = new Map<string, FieldKey>();
  for (const field of filter?.inequalityFields ?? []) {
    const c = canonical(field);
    if (!ordered.has(c)) unordered.set(c, field);
  }
  const lastDescending = orderings.at(-1)?.descending ?? false;
  for (const c of [...unordered.keys()].sort()) {
    orderings.push({ field: unordered.get(c) ?? null, canonical: c, descending: lastDescending });
  }
  if (!orderings.some((o) => o.field === null)) {
    orderings.push({ field: null, canonical: KEY_FIELD, descending: lastDescending });
  }

  const limit = query.limit ? (query.limit.value ?? 0) : undefined;
  if (limit !== undefined && limit < 0) throw invalidArgument('limit must not be negative.');
  const offset = query.offset ?? 0;
  if (offset < 0) throw invalidArgument('offset must not be negative.');

  let projection: string[][] | undefined;
  const selected = query.select?.fields ?? [];
  if (selected.length > 0) {
    projection = selected
      .map((f) => parseFieldKey(f.fieldPath, 'A projection'))
      .filter((f): f is string[] => f !== null);
  }

  const orderedFields = orderings.map((o) => o.field).filter((f): f is string[] => f !== null);
  return {
    collectionId,
    allDescendants,
    // A document without a value for an ordered field is not in the result (Firestore's index rule).
    matches: (doc) =>
      orderedFields.every((f) => getField(doc.fields, f) !== undefined) &&
      (filter ? filter.matches(doc) : true),
    orderings,
    startAt: compileCursor(query.startAt, orderings, 'startAt'),
    endAt: compileCursor(query.endAt, orderings, 'endAt'),
    offset,
    limit,
    projection,
  };
}

function compareByOrderings(a: QueryDocument, b: QueryDocument, orderings: Ordering[]): number {
  for (const o of orderings) {
    const c =
      o.field === null
        ? compareResourceNames(a.name, b.name)
        : compareValues(getField(a.fields, o.field) as Value, getField(b.fields, o.field) as Value);
    if (c !== 0) return o.descending ? -c : c;
  }
  return 0;
}

/** How a cursor position compares with a document: negative when the cursor sorts first. */
function compareBoundToDocument(bound: Bound, orderings: Ordering[], doc: QueryDocument): number {
  for (let i = 0; i < bound.values.length; i++) {
    const o = orderings[i] as Ordering;
    const value = bound.values[i] as Value;
    const c =
      o.field === null
        ? compareResourceNames(value.referenceValue ?? '', doc.name)
        : compareValues(value, getField(doc.fields, o.field) as Value);
    if (c !== 0) return o.descending ? -c : c;
  }
  return 0;
}

export interface QueryResult<T extends QueryDocument> {
  documents: T[];
  skipped: number;
}

/** Filters, orders, bounds, offsets and limits candidate documents (those in the selected collections). */
export function executeQuery<T extends QueryDocument>(
  plan: QueryPlan,
  candidates: Iterable<T>,
): QueryResult<T> {
  const matching: T[] = [];
  for (const doc of candidates) if (plan.matches(doc)) matching.push(doc);
  matching.sort((a, b) => compareByOrderings(a, b, plan.orderings));
  const { startAt, endAt } = plan;
  const inRange = matching.filter((doc) => {
    if (startAt) {
      const c = compareBoundToDocument(startAt, plan.orderings, doc);
      // startAt (before) includes the cursor position, startAfter excludes it.
      if (startAt.before ? c > 0 : c >= 0) return false;
    }
    if (endAt) {
      const c = compareBoundToDocument(endAt, plan.orderings, doc);
      // endBefore (before) excludes the cursor position, endAt includes it.
      if (endAt.before ? c <= 0 : c < 0) return false;
    }
    return true;
  });
  const skipped = Math.min(plan.offset, inRange.length);
  const afterOffset = inRange.slice(skipped);
  const documents = plan.limit === undefined ? afterOffset : afterOffset.slice(0, plan.limit);
  return { documents, skipped };
}

export function applyProjection(fields: Fields, projection: string[][] | undefined): Fields {
  return projection ? projectFields(fields, projection) : fields;
}
