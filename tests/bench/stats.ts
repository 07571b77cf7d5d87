/** Summary statistics for benchmark samples. */

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/**
 * The q-quantile by linear interpolation between closest ranks (the common "type 7" definition, as
 * numpy and spreadsheets compute it), so a p95 of 20 samples sits between the 19th and 20th.
 */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  const low = sorted[lower] as number;
  const high = sorted[upper] as number;
  return low + (high - low) * (position - lower);
}

export function timestamp(date = new Date()): string {
  return date.toISOString().replace(/[:.]/g, '-');
}
