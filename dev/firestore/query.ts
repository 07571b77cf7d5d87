import { invalidArgument, unimplemented } from './errors.ts';
import { compareResourceNames, compareValues, getField, parseFieldPath, typeOrder } from './values.ts';
import type { Cursor, Filter, StructuredQuery, Value } from './wire.ts';

// StructuredQuery as Cloud Firestore defines it, for the queries the product runs: one collection, equality
// and range filters joined by AND, orderBy (with Firestore's implicit order), cursors, offset, limit. Anything
// else is refused with UNIMPLEMENTED naming it, never approximated.

/** A document as a query sees it. */
export interface QueryDocument {
  name: string;
  fields: Record<string, Value>;
}

/** A field path, or `null` for the document's key (`__name__`). */
type FieldKey = string[] | null;

interface Ordering {
  field: FieldKey;
  descending: boolean;
}

interface Bound {
  values: Value[];
  before: boolean;
}

export interface QueryPlan {
  collectionId: string;
  matches: (doc: QueryDocument) => boolean;
  orderings: Ordering[];
  startAt?: Bound;
  endAt?: Bound;
  offset: number;
  limit?: number;
}

const KEY_FIELD = '__name__';
const COMPARISONS: Record<string, (c: number) => boolean> = {
  EQUAL: (c) => c === 0,
  LESS_THAN: (c) => c < 0,
  LESS_THAN_OR_EQUAL: (c) => c <= 0,
  GREATER_THAN: (c) => c > 0,
  GREATER_THAN_OR_EQUAL: (c) => c >= 0,
};

function fieldKey(path: string | undefined): FieldKey {
  if (!path) throw invalidArgument('A field reference has no field path.');
  return path === KEY_FIELD ? null : parseFieldPath(path);
}

const sameField = (a: FieldKey, b: FieldKey) => (a === null ? b === null : a.join('.') === b?.join('.'));

function valueAt(doc: QueryDocument, field: FieldKey): Value | undefined {
  return field === null ? { referenceValue: doc.name } : getField(doc.fields, field);
}

function refuseUnknown(object: object, allowed: readonly string[], what: string): void {
  const extra = Object.keys(object).find((key) => !allowed.includes(key));
  if (extra) throw unimplemented(`${what} "${extra}"`);
}

interface FieldCondition {
  field: FieldKey;
  op: string;
  operand: Value;
}

/** The AND-ed field filters of a `where`; OR, unary filters and other operators are refused. */
function conditions(filter: Filter | undefined): FieldCondition[] {
  if (!filter) return [];
  refuseUnknown(filter, ['fieldFilter', 'compositeFilter'], 'the filter');
  if (filter.compositeFilter) {
    if (filter.compositeFilter.op !== 'AND') throw unimplemented(`${filter.compositeFilter.op} filters`);
    return (filter.compositeFilter.filters ?? []).flatMap(conditions);
  }
  const { field, op = '', value } = filter.fieldFilter ?? {};
  if (!COMPARISONS[op]) throw unimplemented(`the ${op} field filter`);
  if (!value) throw invalidArgument('A field filter needs a value.');
  if ('nullValue' in value || Number.isNaN(value.doubleValue)) {
    throw unimplemented(`a ${op} filter with a null or NaN operand`);
  }
  const key = fieldKey(field?.fieldPath);
  if (key === null && value.referenceValue === undefined) {
    throw invalidArgument(`A filter on ${KEY_FIELD} must compare with a document reference.`);
  }
  return [{ field: key, op, operand: value }];
}

function cursor(bound: Cursor | undefined, orderings: Ordering[]): Bound | undefined {
  if (!bound) return undefined;
  const values = bound.values ?? [];
  if (values.length > orderings.length) throw invalidArgument('Too many cursor values for the orderBy.');
  if (values.some((v, i) => orderings[i]?.field === null && v.referenceValue === undefined)) {
    throw invalidArgument(`A cursor value for ${KEY_FIELD} must be a document reference.`);
  }
  return { values, before: bound.before === true };
}

/**
 * Validates a StructuredQuery and works out its full ordering: the explicit orderBy, then the inequality
 * field if not yet ordered, then `__name__` in the direction of the last explicit order, as Firestore does.
 */
export function planQuery(query: StructuredQuery): QueryPlan {
  refuseUnknown(query, ['from', 'where', 'orderBy', 'startAt', 'endAt', 'offset', 'limit'], 'the query part');
  const [from, ...more] = query.from ?? [];
  if (!from || more.length > 0) throw invalidArgument('A query must select exactly one collection.');
  if (from.allDescendants) throw unimplemented('collection group queries');
  if (!from.collectionId) throw invalidArgument('A collection query needs a collection id.');

  const where = conditions(query.where);
  const ranged = where.filter((c) => c.op !== 'EQUAL');
  if (ranged.some((c) => !sameField(c.field, ranged[0]?.field ?? null))) {
    throw unimplemented('range filters on more than one field');
  }
  const orderings: Ordering[] = (query.orderBy ?? []).map((o) => ({
    field: fieldKey(o.field?.fieldPath),
    descending: o.direction === 'DESCENDING',
  }));
  const descending = orderings.at(-1)?.descending ?? false;
  const inequality = ranged[0]?.field;
  if (inequality !== undefined && !orderings.some((o) => sameField(o.field, inequality))) {
    orderings.push({ field: inequality, descending });
  }
  if (!orderings.some((o) => o.field === null)) orderings.push({ field: null, descending });

  const limit = query.limit ? (query.limit.value ?? 0) : undefined;
  const offset = query.offset ?? 0;
  if ((limit ?? 0) < 0 || offset < 0) throw invalidArgument('limit and offset must not be negative.');
  const ordered = orderings.map((o) => o.field).filter((f): f is string[] => f !== null);
  return {
    collectionId: from.collectionId,
    // A document without a value for an ordered field is not in the result (Firestore's index rule), and
    // a comparison only matches values of the operand's type (integers and doubles are one type).
    matches: (doc) =>
      ordered.every((f) => getField(doc.fields, f) !== undefined) &&
      where.every(({ field, op, operand }) => {
        const value = valueAt(doc, field);
        return (
          value !== undefined &&
          typeOrder(value) === typeOrder(operand) &&
          (COMPARISONS[op] as (c: number) => boolean)(compareValues(value, operand))
        );
      }),
    orderings,
    startAt: cursor(query.startAt, orderings),
    endAt: cursor(query.endAt, orderings),
    offset,
    limit,
  };
}

function compareAt(a: Value | undefined, b: Value | undefined, o: Ordering): number {
  const c =
    o.field === null
      ? compareResourceNames(a?.referenceValue ?? '', b?.referenceValue ?? '')
      : compareValues(a as Value, b as Value);
  return o.descending ? -c : c;
}

/** How a cursor position compares with a document: negative when the cursor sorts first. */
function compareBound(bound: Bound, orderings: Ordering[], doc: QueryDocument): number {
  for (const [i, value] of bound.values.entries()) {
    const o = orderings[i] as Ordering;
    const c = compareAt(value, valueAt(doc, o.field), o);
    if (c !== 0) return c;
  }
  return 0;
}

/** Filters, orders, bounds, offsets and limits the documents of the selected collection. */
export function executeQuery<T extends QueryDocument>(
  plan: QueryPlan,
  candidates: Iterable<T>,
): { documents: T[]; skipped: number } {
  const { orderings, startAt, endAt } = plan;
  const inRange = [...candidates]
    .filter(plan.matches)
    .sort((a, b) => {
      for (const o of orderings) {
        const c = compareAt(valueAt(a, o.field), valueAt(b, o.field), o);
        if (c !== 0) return c;
      }
      return 0;
    })
    .filter((doc) => {
      // startAt (before) includes the cursor position, startAfter excludes it; endBefore (before)
      // excludes it, endAt includes it.
      const afterStart = !startAt || compareBound(startAt, orderings, doc) < (startAt.before ? 1 : 0);
      const beforeEnd = !endAt || compareBound(endAt, orderings, doc) > (endAt.before ? 0 : -1);
      return afterStart && beforeEnd;
    });
  const skipped = Math.min(plan.offset, inRange.length);
  const rest = inRange.slice(skipped);
  return { documents: plan.limit === undefined ? rest : rest.slice(0, plan.limit), skipped };
}
