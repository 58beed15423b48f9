/**
 * `npm run bench:check [-- --runs N] [--update-baseline] [--wait-quiet S]`
 * A short regression check for CI: compacts the check-20x250k fixture (the 20x1M shape at a
 * quarter size) with workers 0 and 2 in fresh processes and compares RATIOS, not absolute
 * times, with bench/baseline.json: a slower or faster machine moves the numerator and the I/O
 * floor (or the other worker count) together, a regression in chainpress moves only one.
 * Exits 1 when a ratio is worse than its baseline by more than the baseline's noise margin.
 */

import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { ensureFixture, repoRoot } from "./fixtures/fixture-cache.js";
import { DEFAULT_SEED } from "./fixtures/presets.js";
import { compareToBaseline, marginsFrom, type Baseline, type Ratios } from "./lib/baseline.js";
import { runE2e, type E2eSummary } from "./lib/e2e.js";
import { machineInfo, sourceInfo } from "./lib/machine.js";
import { median } from "./lib/stats.js";

const FIXTURE = "check-20x250k";
/** Fresh processes per worker count in one run; the median is compared. */
const ITERATIONS = 5;

/**
 * Wall-time ratios catch regressions in waiting and parallelism but move with other users' load;
 * the CPU-time ratios (against JSON.parse of the same file) barely do, and catch work regressions
 * with a much tighter margin.
 */
function ratiosOf(w0: E2eSummary, w2: E2eSummary): Ratios {
  return {
    "workers0 CPU / parse CPU": w0.cpuOverParse,
    "workers2 CPU / parse CPU": w2.cpuOverParse,
    "workers0 wall / I/O floor": w0.wallOverFloor,
    "workers2 wall / I/O floor": w2.wallOverFloor,
    "workers2 wall / workers0 wall": w2.wallMs / w0.wallMs,
    "workers2 event-loop max / wall": w2.eventLoopMaxMs / w2.wallMs,
    "workers2 peak RSS / (2.5 x file + 150 MB)": w2.peakRssMb / w2.rssBudgetMb,
  };
}

async function measure(file: string, resultChars: number, waitQuietS: number): Promise<Ratios> {
  const fixture = { name: FIXTURE, file, resultChars };
  const gate = { threshold: 0.25, maxWaitMs: waitQuietS * 1000 };
  const [w0, w2] = await runE2e([fixture], { workerCounts: [0, 2], iterationsFor: () => ITERATIONS, measureLoad: false, gate });
  return ratiosOf(w0!, w2!);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: "string" }, "update-baseline": { type: "boolean" }, "wait-quiet": { type: "string" } } });
  const runs = Number(values.runs ?? 1);
  const fixture = ensureFixture(FIXTURE, DEFAULT_SEED);
  const measured: Ratios[] = [];
  for (let i = 0; i < runs; i++) {
    measured.push(await measure(fixture.file, fixture.summary.resultChars, Number(values["wait-quiet"] ?? 0)));
    console.log(`run ${i + 1}/${runs}: ${JSON.stringify(measured[i])}`);
  }
  const current = Object.fromEntries(Object.keys(measured[0]!).map((k) => [k, median(measured.map((r) => r[k]!))]));
  const baselineFile = path.join(repoRoot(), "bench", "baseline.json");
  if (values["update-baseline"]) {
    const baseline: Baseline = { fixture: FIXTURE, seed: DEFAULT_SEED, iterations: ITERATIONS, ratios: current, ...marginsFrom(measured), runs, machine: { ...machineInfo() }, source: { ...sourceInfo(repoRoot()) }, takenAt: new Date().toISOString() };
    fs.writeFileSync(baselineFile, `${JSON.stringify(baseline, null, 2)}\n`);
    console.log(`wrote ${baselineFile}`);
    return;
  }
  const { ok, table } = compareToBaseline(JSON.parse(fs.readFileSync(baselineFile, "utf8")) as Baseline, current);
  console.log(`${table}\n${ok ? "bench:check passed" : "bench:check FAILED: a ratio regressed beyond its noise margin"}`);
  process.exitCode = ok ? 0 : 1;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
