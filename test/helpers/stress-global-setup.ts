/**
 * Global setup of `npm run test:stress` (vitest.stress.config.ts): starts an empty figures file
 * and, once every test file is done, prints the closing figures (see stress-figures.ts).
 */

import fs from "node:fs";
import { FIGURE_LABELS, readFigures, type FigureName } from "./stress-figures.js";

export default function setup(): () => void {
  const file = process.env.CHAINPRESS_STRESS_FIGURES;
  if (!file) throw new Error("CHAINPRESS_STRESS_FIGURES is not set (run through vitest.stress.config.ts)");
  fs.rmSync(file, { force: true });
  const started = Date.now();
  return () => {
    const { totals, details } = readFigures(file);
    const rows: Array<[string, string]> = [
      [FIGURE_LABELS.killPoints, killPointsText(details.killRuns)],
      ...(["killRuns", "fuzzCases", "faultsInjected", "recordsVerified", "recordsLost", "knownBugLosses", "knownBugCrashes"] as FigureName[])
        // Known-bug counters only appear while a test records some (a pinned, still open bug).
        .filter((name) => !name.startsWith("knownBug") || totals[name] > 0)
        .map((name): [string, string] => [
        FIGURE_LABELS[name],
        details[name].length > 0 && (name === "knownBugLosses" || name === "knownBugCrashes") ? `${totals[name]} (${details[name].join("; ")})` : String(totals[name]),
      ]),
    ];
    const width = Math.max(...rows.map(([label]) => label.length));
    const lines = [
      "",
      "chainpress stress figures",
      ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
      ...(details.faultsInjected.length > 0 ? [`  faults: ${details.faultsInjected.join("; ")}`] : []),
      `  wall time ${((Date.now() - started) / 1000).toFixed(0)} s`,
      "",
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    if (process.env.CHAINPRESS_STRESS_KEEP_FIGURES !== "1") fs.rmSync(file, { force: true });
  };
}

/** "7 (a, b, …); also a second kill inside the --repair rerun at 6 of them". */
function killPointsText(details: string[]): string {
  const first = details.filter((d) => !d.includes("(inside"));
  const second = details.filter((d) => d.includes("(inside"));
  const tail = second.length > 0 ? `; plus a second kill inside the --repair rerun at ${second.length} of them` : "";
  return `${first.length} (${first.join(", ")})${tail}`;
}
