import { digitGroups } from "../digit-groups.js";

/** The smallest 1, 2 or 5 × 10^k step at least `raw` (and at least `min`). */
export function niceStep(raw: number, min: number): number {
  if (!(raw > min)) return min;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

/** Ticks from 0 to the first step at or above `max` (at least one step), about `count` of them. */
export function valueTicks(max: number, count: number, minStep: number): number[] {
  const step = niceStep(max / count, minStep);
  const top = Math.max(step, Math.ceil(max / step - 1e-9) * step);
  const ticks: number[] = [];
  for (let k = 0; k * step <= top + step / 2; k++) ticks.push(k * step);
  return ticks;
}

/** 1-based request numbers to label on an axis of `requests` requests. */
export function requestTicks(requests: number, count: number): number[] {
  if (requests <= 0) return [];
  const step = niceStep(requests / count, 1);
  const ticks = step > 1 ? [1] : [];
  for (let t = step; t <= requests; t += step) ticks.push(t);
  return ticks;
}

export function formatTokens(v: number): string {
  return digitGroups(Math.round(v));
}

/** US dollars with cents and thousands separators: "$1,234.56". */
export function formatUsd(v: number): string {
  const cents = Math.round(v * 100);
  const whole = Math.trunc(cents / 100);
  return `$${digitGroups(whole)}.${String(cents % 100).padStart(2, "0")}`;
}
