/**
 * The bench:check baseline: committed ratios with a noise margin each, and the comparison that
 * fails on a regression. Pure: check.ts does the measuring and the file I/O.
 */

import { spread } from "./stats.js";
import { markdownTable } from "./table.js";

/** Named ratios; lower is better unless the baseline lists the name in `higherIsBetter`. */
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
  /** The gated ratios. */
  ratios: Ratios;
  /** Gated ratios where higher is better (a speed-up); absent: none. */
  higherIsBetter?: string[];
  /**
   * The target per gated ratio: a value that meets it never fails, however far it moved
   * from the baseline (a 5 ms event-loop max that becomes 12 ms is noise, not a regression).
   */
  target?: Ratios;
  /** Printed next to the gated ratios but never gated (too noisy on a shared machine). */
  reported?: Ratios;
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

/**
 * Margins from repeated measurements of the same ratios (at least 3 runs). `minimums` raises the
 * floor for ratios known to jump more than a few runs show (see check.ts).
 */
export function marginsFrom(runs: readonly Ratios[], minimums: Ratios = {}): { spread: Ratios; margin: Ratios } {
  if (runs.length < 3) throw new Error("a noise margin needs 3 or more runs");
  const keys = Object.keys(runs[0]!);
  const spreads = Object.fromEntries(keys.map((k) => [k, spread(runs.map((r) => r[k]!))]));
  const margin = Object.fromEntries(keys.map((k) => [k, Math.ceil(Math.max(minimums[k] ?? MIN_MARGIN, SAFETY * spreads[k]!) * 100) / 100]));
  return { spread: spreads, margin };
}

export interface Comparison {
  ok: boolean;
  table: string;
}

/**
 * A lower-is-better ratio regresses when it is above baseline × (1 + margin), a higher-is-better
 * one when it is below baseline / (1 + margin) (the same factor, mirrored); either passes while it
 * meets its target. A missing ratio fails.
 */
export function compareToBaseline(baseline: Pick<Baseline, "ratios" | "margin" | "higherIsBetter" | "target">, current: Ratios): Comparison {
  let ok = true;
  const rows = Object.keys(baseline.ratios).map((k) => {
    const higher = baseline.higherIsBetter?.includes(k) === true;
    const factor = 1 + baseline.margin[k]!;
    const limit = higher ? baseline.ratios[k]! / factor : baseline.ratios[k]! * factor;
    const value = current[k] ?? Number.NaN;
    const target = baseline.target?.[k];
    const meetsTarget = target !== undefined && (higher ? value >= target : value <= target);
    const regressed = !meetsTarget && !(higher ? value >= limit : value <= limit);
    if (regressed) ok = false;
    const verdict = regressed ? "REGRESSED" : meetsTarget && !(higher ? value >= limit : value <= limit) ? "ok (meets target)" : "ok";
    const margin = higher ? `/${factor.toFixed(2)}` : `+${(baseline.margin[k]! * 100).toFixed(0)}%`;
    return [k, higher ? "higher" : "lower", baseline.ratios[k]!, margin, limit, target ?? "-", value, verdict];
  });
  return { ok, table: markdownTable(["gated ratio", "better", "baseline", "margin", "limit", "target", "now", "verdict"], rows, 3) };
}

/** Ratios printed for information: the baseline's value and today's, no verdict. */
export function reportedTable(baseline: Pick<Baseline, "reported">, current: Ratios): string {
  const rows = Object.keys(current).map((k) => [k, baseline.reported?.[k] ?? "-", current[k]!, "reported, not gated"]);
  return markdownTable(["ratio (lower is better)", "baseline", "now", "verdict"], rows, 3);
}
