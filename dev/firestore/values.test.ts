// Firestore's value rules where JavaScript's defaults differ: UTF-8 string order, exact comparison of
// integers with doubles, field paths, microsecond timestamps.
import { describe, expect, it } from 'vitest';
import {
  compareStrings,
  compareValues,
  normaliseTimestampValue,
  parseFieldPath,
  timestampToIso,
} from './values.ts';

describe('compareStrings', () => {
  it('orders by UTF-8 bytes (code points), not UTF-16 code units', () => {
    // '\uFFFF' < U+1F600 in UTF-8, although JavaScript's < says the opposite.
    expect('😀' < '\uFFFF').toBe(true);
    expect(compareStrings('\uFFFF', '😀')).toBe(-1);
    expect(compareStrings('a', 'ab')).toBe(-1);
    expect(compareStrings('b', 'ab')).toBe(1);
    expect(compareStrings('same', 'same')).toBe(0);
  });
});

describe('compareValues', () => {
  it('compares integers with doubles exactly, beyond 2^53', () => {
    const big = { integerValue: '9007199254740993' }; // 2^53 + 1, not representable as a double
    const double = { doubleValue: 9007199254740992 }; // 2^53
    expect(compareValues(big, double)).toBe(1);
    expect(compareValues(double, big)).toBe(-1);
    expect(compareValues({ integerValue: '3' }, { doubleValue: 3 })).toBe(0);
    expect(compareValues({ integerValue: '-2' }, { doubleValue: -1.5 })).toBe(-1);
  });

  it('puts NaN before every other number and treats -0 as 0', () => {
    expect(compareValues({ doubleValue: Number.NaN }, { doubleValue: Number.NEGATIVE_INFINITY })).toBe(-1);
    expect(compareValues({ doubleValue: Number.NaN }, { doubleValue: Number.NaN })).toBe(0);
    expect(compareValues({ doubleValue: -0 }, { integerValue: '0' })).toBe(0);
  });

  it('orders arrays element-wise and maps by sorted keys', () => {
    const arr = (...n: number[]) => ({ arrayValue: { values: n.map((x) => ({ integerValue: String(x) })) } });
    expect(compareValues(arr(1, 2), arr(1, 2, 0))).toBe(-1);
    expect(compareValues(arr(2), arr(1, 9))).toBe(1);
    const map = (fields: Record<string, number>) => ({
      mapValue: {
        fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { integerValue: String(v) }])),
      },
    });
    expect(compareValues(map({ b: 1 }), map({ a: 9, c: 1 }))).toBe(1);
    expect(compareValues(map({ a: 1 }), map({ a: 1, b: 0 }))).toBe(-1);
  });
});

describe('field paths', () => {
  it('parses dotted paths', () => {
    expect(parseFieldPath('a.b.c')).toEqual(['a', 'b', 'c']);
    expect(parseFieldPath('__name__')).toEqual(['__name__']);
  });

  it('refuses malformed paths, and quoted ones as not implemented', () => {
    for (const bad of ['', 'a..b', 'a.'])
      expect(() => parseFieldPath(bad), bad).toThrow(/Invalid field path/);
    expect(() => parseFieldPath('`x.y`.z')).toThrow(/does not implement quoted field paths/);
  });
});

describe('timestamps', () => {
  it('are kept to microseconds, as Firestore stores them', () => {
    expect(normaliseTimestampValue({ seconds: '10', nanos: 123456789 })).toEqual({
      seconds: '10',
      nanos: 123456000,
    });
    expect(timestampToIso({ seconds: '0', nanos: 1000 })).toBe('1970-01-01T00:00:00.000001Z');
  });

  it('refuse values outside years 1..9999', () => {
    expect(() => normaliseTimestampValue({ seconds: '253402300800' })).toThrow(/out of range/);
  });
});
