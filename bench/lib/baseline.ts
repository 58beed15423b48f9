/**
 * The bench:check baseline: committed ratios with a noise margin each, and the comparison that
 * fails on a regression. Pure: check.ts does the measuring and the file I/O.
 */

import { spread } from "./stats.js";
import { markdownTable } from "./table.js";

/** Named ratios; lower is better for every one. */
export type Ratios = Record<string, number>;

/**
 * Margin = max(MIN_MARGIN, SAFETY × run-to-run spread measured when the baseline was taken):
 * a regression must stand clearly above the noise this machine showed, and a ratio that looked
 * very stable still gets 15%, because CI runners are noisier than one quiet session.
 */
export const MIN_MARGIN = 0.15;
export const SAFETY = 2;

export interface Baseline {
  fixture: string;
  seed: number;
  iterations: number;
  ratios: Ratios;
  /** Largest relative distance from the median over the runs the baseline was taken from. */
  spread: Ratios;
  margin: Ratios;
  /** Spread of a second series taken while other work loaded the machine (hand-merged into margin). */
  spreadUnderLoad?: Ratios;
  /** How the margins were chosen. */
  marginNote?: string;
  runs: number;
  machine: Record<string, unknown>;
  /** The chainpress source the baseline was measured on. */
  source?: Record<string, unknown>;
  takenAt: string;
}

/** Margins from repeated measurements of the same ratios (at least 3 runs). */
export function marginsFrom(runs: readonly Ratios[]): { spread: Ratios; margin: Ratios } {
  if (runs.length < 3) throw new Error("a noise margin needs 3 or more runs");
  const keys = Object.keys(runs[0]!);
  const spreads = Object.fromEntries(keys.map((k) => [k, spread(runs.map((r) => r[k]!))]));
  const margin = Object.fromEntries(keys.map((k) => [k, Math.ceil(Math.max(MIN_MARGIN, SAFETY * spreads[k]!) * 100) / 100]));
  return { spread: spreads, margin };
}

export interface Comparison {
  ok: boolean;
  table: string;
}

/** A ratio regresses when it is above baseline × (1 + margin); a missing ratio also fails. */
export function compareToBaseline(baseline: Pick<Baseline, "ratios" | "margin">, current: Ratios): Comparison {
  let ok = true;
  const rows = Object.keys(baseline.ratios).map((k) => {
    const limit = baseline.ratios[k]! * (1 + baseline.margin[k]!);
    const value = current[k] ?? Number.NaN;
    const regressed = !(value <= limit);
    if (regressed) ok = false;
    return [k, baseline.ratios[k]!, `+${(baseline.margin[k]! * 100).toFixed(0)}%`, limit, value, regressed ? "REGRESSED" : "ok"];
  });
  return { ok, table: markdownTable(["ratio (lower is better)", "baseline", "margin", "limit", "now", "verdict"], rows, 3) };
}
