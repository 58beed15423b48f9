/** Small statistics helpers for benchmark samples. Pure. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function max(values: readonly number[]): number {
  return values.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);
}

/** Largest relative distance of any sample from the median (the run-to-run spread). */
export function spread(values: readonly number[]): number {
  const m = median(values);
  return max(values.map((v) => Math.abs(v - m) / m));
}

/** Median of each key over a list of records with the same keys. */
export function medianByKey(records: ReadonlyArray<Record<string, number>>): Record<string, number> {
  const keys = new Set(records.flatMap((r) => Object.keys(r)));
  return Object.fromEntries([...keys].map((k) => [k, median(records.map((r) => r[k] ?? 0))]));
}
