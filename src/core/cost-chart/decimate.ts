/**
 * Indices of `values` to draw at `columns` pixel columns: in each column the first index of its
 * smallest and of its largest value, in request order, so the polyline keeps every peak and trough
 * whatever the number of requests; the first and last requests are always kept.
 */
export function decimate(values: readonly number[], columns: number): number[] {
  const n = values.length;
  if (n <= columns * 2) return Array.from({ length: n }, (_, i) => i);
  const kept: number[] = [];
  let start = 0;
  for (let c = 0; c < columns; c++) {
    const end = Math.floor(((c + 1) * n) / columns);
    if (end <= start) continue;
    let lo = start;
    let hi = start;
    for (let i = start + 1; i < end; i++) {
      if (values[i]! < values[lo]!) lo = i;
      if (values[i]! > values[hi]!) hi = i;
    }
    if (lo === hi) kept.push(lo);
    else kept.push(Math.min(lo, hi), Math.max(lo, hi));
    start = end;
  }
  if (kept[0] !== 0) kept.unshift(0);
  if (kept[kept.length - 1] !== n - 1) kept.push(n - 1);
  return kept;
}
