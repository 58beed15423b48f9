/**
 * `npm run bench [-- --full] [--iterations N] [--workers 0,1,2] [--wait-quiet S] [--stage-time MS] [--no-stages] [--seed N]`
 * Per-stage costs on one ~1M-character chain, then end-to-end compaction of one-640 and 20x1M
 * (and 200x1M with --full) for workers 0, 1, 2 and all cores, each case in fresh processes.
 * Prints tables and writes bench/out/bench-<time>.json and bench/out/latest.json.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { ensureFixture, repoRoot } from "./fixtures/fixture-cache.js";
import { DEFAULT_SEED } from "./fixtures/presets.js";
import { runE2e, type E2eFixture } from "./lib/e2e.js";
import { machineInfo, sourceInfo } from "./lib/machine.js";
import { breakdownTable, e2eTable, judgeTargets, stageTable, verdictTable } from "./lib/report.js";
import { runStageBench, type StageResult } from "./lib/stages.js";

/** "Quiet" = at most this share of all CPUs busy with other work (one core of two at half load). */
const QUIET_THRESHOLD = 0.25;

/** Iterations per case when --iterations is not given: fewer for the bigger sessions. */
const DEFAULT_ITERATIONS: Record<string, number> = { "one-640": 5, "one-640 warm": 5, "20x1M": 3, "200x1M": 1 };

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      full: { type: "boolean" },
      iterations: { type: "string" },
      "stage-time": { type: "string" },
      "no-stages": { type: "boolean" },
      seed: { type: "string" },
      workers: { type: "string" },
      "wait-quiet": { type: "string" },
    },
  });
  const seed = values.seed === undefined ? DEFAULT_SEED : Number(values.seed);
  const machine = machineInfo();
  const workerCounts = values.workers ? values.workers.split(",").map(Number) : [...new Set([0, 1, 2, machine.cpus])];
  const names = ["one-640", "20x1M", ...(values.full ? ["200x1M"] : [])];
  const fixtures = names.map((name) => fixtureOf(name, seed));
  // The same 1M chain in a process that already compacted it 3 times: separates the cold-start
  // cost (JIT, module loading) from the per-character cost.
  fixtures.splice(1, 0, { ...fixtures[0]!, name: "one-640 warm", warmups: 3 });
  console.log(`machine: ${machine.cpus} cores (${machine.cpuModel}), ${machine.totalMemGb} GB, node ${machine.node}, loadavg ${machine.loadAvgAtStart.toFixed(2)}`);
  const stages = values["no-stages"] ? [] : await stagePhase(fixtures[0]!.file, Number(values["stage-time"] ?? 500));
  const iterationsFor = (f: E2eFixture) => (values.iterations ? Number(values.iterations) : (DEFAULT_ITERATIONS[f.name] ?? 1));
  // --wait-quiet S: before each case wait up to S seconds for other work to leave the CPUs idle.
  const gate = { threshold: QUIET_THRESHOLD, maxWaitMs: Number(values["wait-quiet"] ?? 0) * 1000 };
  const e2e = await runE2e(fixtures, { workerCounts, iterationsFor, measureLoad: true, gate });
  console.log(`\nEnd-to-end compaction (median of n fresh processes; ratios against the I/O floor of the same run)\n${e2eTable(e2e)}`);
  console.log(`\nWhere the wall time goes (ms; * = timed separately in the same child; worker stages are summed over threads)\n${breakdownTable(e2e)}`);
  const verdicts = judgeTargets(e2e, machine.cpus);
  console.log(`\nIssue-10 targets\n${verdictTable(verdicts)}`);
  writeResults({ machine, source: sourceInfo(repoRoot()), seed, workerCounts, stages, e2e, verdicts, startedAt: new Date().toISOString() });
}

function fixtureOf(name: string, seed: number): E2eFixture {
  const fixture = ensureFixture(name, seed);
  return { name, file: fixture.file, resultChars: fixture.summary.resultChars };
}

async function stagePhase(file: string, timeMs: number): Promise<StageResult[]> {
  const stages = await runStageBench(file, timeMs);
  console.log(`\nPer-stage costs (tinybench, ${timeMs} ms per stage)\n${stageTable(stages)}`);
  return stages;
}

function writeResults(results: Record<string, unknown>): void {
  const dir = path.join(repoRoot(), "bench", "out");
  fs.mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(results, null, 2)}${os.EOL}`;
  const stamped = path.join(dir, `bench-${String(results.startedAt).replace(/[:.]/g, "-")}.json`);
  fs.writeFileSync(stamped, json);
  fs.writeFileSync(path.join(dir, "latest.json"), json);
  console.log(`\nwrote ${path.relative(process.cwd(), stamped)} and bench/out/latest.json`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
