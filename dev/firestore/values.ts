import { invalidArgument, unimplemented } from './errors.ts';
import type { Fields, Timestamp, Value } from './wire.ts';

// Firestore's value semantics: the cross-type order, numeric comparison across integers and doubles,
// UTF-8 string order, field paths, timestamps kept at microsecond precision.

/** Firestore's order of value types (null < bool < number < timestamp < string < bytes < reference <
 * geopoint < array < map). */
export function typeOrder(value: Value): number {
  if ('nullValue' in value) return 0;
  if ('booleanValue' in value) return 1;
  if ('integerValue' in value || 'doubleValue' in value) return 2;
  if ('timestampValue' in value) return 3;
  if ('stringValue' in value) return 4;
  if ('bytesValue' in value) return 5;
  if ('referenceValue' in value) return 6;
  if ('geoPointValue' in value) return 7;
  if ('arrayValue' in value) return 8;
  if ('mapValue' in value) return 9;
  throw invalidArgument('A value has no value type set.');
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

/** Compares strings by their UTF-8 encoding, which is code point order (not JavaScript's UTF-16 order). */
export function compareStrings(a: string, b: string): number {
  return a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b));
}

function compareBigInts(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Compares an integer with a double exactly (no rounding of large integers). */
function compareIntegerToDouble(i: bigint, d: number): number {
  if (Number.isNaN(d)) return 1;
  if (d === Number.POSITIVE_INFINITY) return -1;
  if (d === Number.NEGATIVE_INFINITY) return 1;
  const floor = Math.floor(d);
  const c = compareBigInts(i, BigInt(floor));
  if (c !== 0) return c;
  return floor === d ? 0 : -1;
}

function compareNumbers(a: Value, b: Value): number {
  if (a.integerValue !== undefined && b.integerValue !== undefined) {
    return compareBigInts(BigInt(a.integerValue), BigInt(b.integerValue));
  }
  if (a.integerValue !== undefined) return compareIntegerToDouble(BigInt(a.integerValue), b.doubleValue ?? 0);
  if (b.integerValue !== undefined) {
    return -compareIntegerToDouble(BigInt(b.integerValue), a.doubleValue ?? 0) || 0;
  }
  const x = a.doubleValue ?? 0;
  const y = b.doubleValue ?? 0;
  // NaN sorts before every other number and equals itself.
  if (Number.isNaN(x)) return Number.isNaN(y) ? 0 : -1;
  if (Number.isNaN(y)) return 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

export function compareTimestamps(a: Timestamp, b: Timestamp): number {
  const c = compareBigInts(BigInt(a.seconds ?? '0'), BigInt(b.seconds ?? '0'));
  return c !== 0 ? c : sign((a.nanos ?? 0) - (b.nanos ?? 0));
}

/** Orders resource names segment by segment, as Firestore orders document keys. */
export function compareResourceNames(a: string, b: string): number {
  const sa = a.split('/');
  const sb = b.split('/');
  const n = Math.min(sa.length, sb.length);
  for (let i = 0; i < n; i++) {
    const c = compareStrings(sa[i] ?? '', sb[i] ?? '');
    if (c !== 0) return c;
  }
  return sign(sa.length - sb.length);
}

function compareArrays(a: Value[], b: Value[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareValues(a[i] as Value, b[i] as Value);
    if (c !== 0) return c;
  }
  return sign(a.length - b.length);
}

function compareMaps(a: Fields, b: Fields): number {
  const ka = Object.keys(a).sort(compareStrings);
  const kb = Object.keys(b).sort(compareStrings);
  const n = Math.min(ka.length, kb.length);
  for (let i = 0; i < n; i++) {
    const keyA = ka[i] as string;
    const keyB = kb[i] as string;
    const c = compareStrings(keyA, keyB) || compareValues(a[keyA] as Value, b[keyB] as Value);
    if (c !== 0) return c;
  }
  return sign(ka.length - kb.length);
}

/** Firestore's total order of values, as used by orderBy, range filters and cursors. */
export function compareValues(a: Value, b: Value): number {
  const ta = typeOrder(a);
  const tb = typeOrder(b);
  if (ta !== tb) return sign(ta - tb);
  switch (ta) {
    case 0:
      return 0;
    case 1:
      return sign(Number(a.booleanValue ?? false) - Number(b.booleanValue ?? false));
    case 2:
      return compareNumbers(a, b);
    case 3:
      return compareTimestamps(a.timestampValue ?? {}, b.timestampValue ?? {});
    case 4:
      return compareStrings(a.stringValue ?? '', b.stringValue ?? '');
    case 5:
      return sign(Buffer.compare(a.bytesValue ?? Buffer.alloc(0), b.bytesValue ?? Buffer.alloc(0)));
    case 6:
      return compareResourceNames(a.referenceValue ?? '', b.referenceValue ?? '');
    case 7:
      return (
        sign((a.geoPointValue?.latitude ?? 0) - (b.geoPointValue?.latitude ?? 0)) ||
        sign((a.geoPointValue?.longitude ?? 0) - (b.geoPointValue?.longitude ?? 0))
      );
    case 8:
      return compareArrays(a.arrayValue?.values ?? [], b.arrayValue?.values ?? []);
    default:
      return compareMaps(a.mapValue?.fields ?? {}, b.mapValue?.fields ?? {});
  }
}

/** Exact equality, type for type (1 and 1.0 differ): used to tell whether a write changed a document. */
export function identicalValues(a: Value, b: Value): boolean {
  const [ka] = Object.keys(a);
  const [kb] = Object.keys(b);
  if (ka !== kb) return false;
  if (a.doubleValue !== undefined) return Object.is(a.doubleValue, b.doubleValue);
  if (a.bytesValue !== undefined) return b.bytesValue !== undefined && a.bytesValue.equals(b.bytesValue);
  if (a.timestampValue !== undefined)
    return compareTimestamps(a.timestampValue, b.timestampValue ?? {}) === 0;
  if (a.geoPointValue !== undefined) {
    return (
      Object.is(a.geoPointValue.latitude ?? 0, b.geoPointValue?.latitude ?? 0) &&
      Object.is(a.geoPointValue.longitude ?? 0, b.geoPointValue?.longitude ?? 0)
    );
  }
  if (a.arrayValue !== undefined) {
    const va = a.arrayValue.values ?? [];
    const vb = b.arrayValue?.values ?? [];
    return va.length === vb.length && va.every((v, i) => identicalValues(v, vb[i] as Value));
  }
  if (a.mapValue !== undefined) return identicalFields(a.mapValue.fields ?? {}, b.mapValue?.fields ?? {});
  return a[ka as keyof Value] === b[kb as keyof Value];
}

export function identicalFields(a: Fields, b: Fields): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => b[k] !== undefined && identicalValues(a[k] as Value, b[k] as Value));
}

// ---- field paths ----------------------------------------------------------------------------------

/** Parses a field path as the API writes it: dot-separated simple names (`a.b`). */
export function parseFieldPath(path: string): string[] {
  if (path.includes('`')) throw unimplemented(`quoted field paths (${path})`);
  const segments = path.split('.');
  if (segments.some((s) => s === '')) throw invalidArgument(`Invalid field path "${path}".`);
  return segments;
}

export function getField(fields: Fields, segments: readonly string[]): Value | undefined {
  let current: Fields | undefined = fields;
  for (let i = 0; i < segments.length; i++) {
    const value: Value | undefined = current?.[segments[i] as string];
    if (value === undefined) return undefined;
    if (i === segments.length - 1) return value;
    if (value.mapValue === undefined) return undefined;
    current = value.mapValue.fields ?? {};
  }
  return undefined;
}

/** Sets a (possibly nested) field, turning non-map intermediate values into maps as Firestore does. */
export function setField(fields: Fields, segments: readonly string[], value: Value): void {
  let current = fields;
  for (let i = 0; i < segments.length - 1; i++) {
    const key = segments[i] as string;
    let next = current[key];
    if (next?.mapValue === undefined) {
      next = { mapValue: { fields: {} } };
      current[key] = next;
    }
    next.mapValue ??= {};
    next.mapValue.fields ??= {};
    current = next.mapValue.fields;
  }
  current[segments[segments.length - 1] as string] = value;
}

export function deleteField(fields: Fields, segments: readonly string[]): void {
  let current: Fields | undefined = fields;
  for (let i = 0; i < segments.length - 1 && current; i++) {
    current = current[segments[i] as string]?.mapValue?.fields;
  }
  if (current) delete current[segments[segments.length - 1] as string];
}

export function cloneValue(value: Value): Value {
  if (value.arrayValue) return { arrayValue: { values: (value.arrayValue.values ?? []).map(cloneValue) } };
  if (value.mapValue) return { mapValue: { fields: cloneFields(value.mapValue.fields ?? {}) } };
  if (value.timestampValue) return { timestampValue: { ...value.timestampValue } };
  if (value.geoPointValue) return { geoPointValue: { ...value.geoPointValue } };
  if (value.bytesValue) return { bytesValue: Buffer.from(value.bytesValue) };
  return { ...value };
}

export function cloneFields(fields: Fields): Fields {
  const out: Fields = {};
  for (const [k, v] of Object.entries(fields)) out[k] = cloneValue(v);
  return out;
}

// ---- timestamps -----------------------------------------------------------------------------------

/** Microseconds since the epoch: the resolution of every time Firestore stores. */
export type Micros = bigint;

export function microsToTimestamp(micros: Micros): Timestamp {
  const seconds = micros / 1_000_000n;
  const nanos = Number(micros % 1_000_000n) * 1000;
  const out: Timestamp = {};
  if (seconds !== 0n) out.seconds = seconds.toString();
  if (nanos !== 0) out.nanos = nanos;
  return out;
}

export function timestampToMicros(ts: Timestamp): Micros {
  return BigInt(ts.seconds ?? '0') * 1_000_000n + BigInt(Math.floor((ts.nanos ?? 0) / 1000));
}

const MIN_SECONDS = -62135596800n; // 0001-01-01T00:00:00Z
const MAX_SECONDS = 253402300799n; // 9999-12-31T23:59:59Z

/** Validates a timestamp value and truncates it to microseconds, as Firestore stores it. */
export function normaliseTimestampValue(ts: Timestamp): Timestamp {
  const seconds = BigInt(ts.seconds ?? '0');
  const nanos = ts.nanos ?? 0;
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS || nanos < 0 || nanos > 999_999_999) {
    throw invalidArgument('Timestamp value out of range: years must be 1 to 9999.');
  }
  const out: Timestamp = {};
  if (seconds !== 0n) out.seconds = seconds.toString();
  const truncated = nanos - (nanos % 1000);
  if (truncated !== 0) out.nanos = truncated;
  return out;
}

export function timestampToIso(ts: Timestamp): string {
  const micros = timestampToMicros(ts);
  const ms = Number(micros / 1000n);
  const fraction = String(Number(((micros % 1_000_000n) + 1_000_000n) % 1_000_000n)).padStart(6, '0');
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, `.${fraction}Z`);
}

// ---- plain JSON, for the dump endpoint ------------------------------------------------------------

export type Plain = null | boolean | number | string | Plain[] | { [key: string]: Plain };

/** A readable rendering of a value for humans and tests (the dump endpoint); not a wire format. */
export function toPlain(value: Value): Plain {
  if ('nullValue' in value) return null;
  if (value.booleanValue !== undefined) return value.booleanValue;
  if (value.integerValue !== undefined) {
    const n = Number(value.integerValue);
    return Number.isSafeInteger(n) ? n : value.integerValue;
  }
  if (value.doubleValue !== undefined) {
    return Number.isFinite(value.doubleValue) ? value.doubleValue : String(value.doubleValue);
  }
  if (value.timestampValue !== undefined) return timestampToIso(value.timestampValue);
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.bytesValue !== undefined) return value.bytesValue.toString('base64');
  if (value.referenceValue !== undefined) return value.referenceValue;
  if (value.geoPointValue !== undefined) {
    return { latitude: value.geoPointValue.latitude ?? 0, longitude: value.geoPointValue.longitude ?? 0 };
  }
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(toPlain);
  return fieldsToPlain(value.mapValue?.fields ?? {});
}

export function fieldsToPlain(fields: Fields): { [key: string]: Plain } {
  const out: { [key: string]: Plain } = {};
  for (const [k, v] of Object.entries(fields)) out[k] = toPlain(v);
  return out;
}
