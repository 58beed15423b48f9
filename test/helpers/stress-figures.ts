/**
 * The closing figures of the stress run (kill points exercised, fuzz cases, faults injected,
 * records verified byte-exact, records lost). Test files run in separate processes, so each
 * figure is appended as one JSON line to the file named by CHAINPRESS_STRESS_FIGURES (set by
 * vitest.stress.config.ts, whose global teardown prints the totals). Without that variable
 * (`npm test`) figures are not recorded.
 */

import fs from "node:fs";

export type FigureName = "killPoints" | "killRuns" | "fuzzCases" | "faultsInjected" | "recordsVerified" | "recordsLost" | "knownBugLosses" | "knownBugCrashes";

export const FIGURE_LABELS: Record<FigureName, string> = {
  killPoints: "distinct kill points exercised",
  killRuns: "SIGKILL runs (point × n)",
  fuzzCases: "fuzz cases run",
  faultsInjected: "faults injected",
  recordsVerified: "records verified byte-exact",
  recordsLost: "records lost",
  knownBugLosses: "fuzz: records altered or unrecoverable through known src bugs",
  knownBugCrashes: "fuzz: runs crashed by known src bugs",
};

export function addFigure(name: FigureName, count: number, detail?: string): void {
  const file = process.env.CHAINPRESS_STRESS_FIGURES;
  if (!file || count === 0) return;
  fs.appendFileSync(file, `${JSON.stringify({ name, count, ...(detail ? { detail } : {}) })}\n`);
}

export interface FigureTotals {
  totals: Record<FigureName, number>;
  /** Distinct details per figure (e.g. the kill point names). */
  details: Record<FigureName, string[]>;
}

export function readFigures(file: string): FigureTotals {
  const totals = Object.fromEntries(Object.keys(FIGURE_LABELS).map((k) => [k, 0])) as Record<FigureName, number>;
  const details = Object.fromEntries(Object.keys(FIGURE_LABELS).map((k) => [k, [] as string[]])) as Record<FigureName, string[]>;
  if (!fs.existsSync(file)) return { totals, details };
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (!line) continue;
    const { name, count, detail } = JSON.parse(line) as { name: FigureName; count: number; detail?: string };
    totals[name] += count;
    if (detail && !details[name].includes(detail)) details[name].push(detail);
  }
  return { totals, details };
}
