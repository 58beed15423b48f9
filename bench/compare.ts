/**
 * `npm run bench:compare -- [presets or session files...] [--iterations N] [--workers 0,2] [--seed N] [--peer FILE]`
 * Whole-process comparison with the upstream compressor, as a user would see it: each run is a
 * fresh `node` process (start-up included) on a fresh copy of the fixture, and upstream,
 * chainpress --workers 0 and --workers 2 are interleaved in rotating order, so the ratios
 * between them come from the same minutes of this (shared) machine. Default presets: 20x1M and
 * 20x300-100M. The upstream peer is used only when it exists (see lib/peer.ts; CHAINPRESS_PEER
 * or --peer override the location); otherwise its row is "skipped (peer not found)".
 * Prints the tables and writes bench/out/compare-<time>.json.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { fixtureOf, repoRoot } from "./fixtures/fixture-cache.js";
import { DEFAULT_SEED } from "./fixtures/presets.js";
import { builtCli } from "./lib/built-cli.js";
import { contenderTable, judgeFixture, phaseTable, summarizeFixture, targetTable, type FixtureSummary, type TargetRow } from "./lib/compare-report.js";
import { runRounds, type FixtureRuns } from "./lib/compare-rounds.js";
import { machineInfo, sourceInfo } from "./lib/machine.js";
import { locatePeer } from "./lib/peer.js";
import { probeScaling } from "./lib/scaling-probe.js";

const DEFAULT_PRESETS = ["20x1M", "20x300-100M"];
const DEFAULT_ITERATIONS = 3;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { iterations: { type: "string" }, workers: { type: "string" }, seed: { type: "string" }, peer: { type: "string" } },
  });
  const presets = positionals.length > 0 ? positionals : DEFAULT_PRESETS;
  const iterations = positiveInt(values.iterations ?? String(DEFAULT_ITERATIONS), "--iterations");
  const workerCounts = (values.workers ?? "0,2").split(",").map((w) => nonNegativeInt(w, "--workers"));
  const seed = values.seed === undefined ? DEFAULT_SEED : nonNegativeInt(values.seed, "--seed");
  const root = repoRoot();
  const cliFile = builtCli(root);
  const peer = locatePeer(root, values.peer);
  const machine = machineInfo();
  const startedAt = new Date().toISOString();
  console.log(`machine: ${machine.cpus} cores (${machine.cpuModel}), ${machine.totalMemGb} GB, node ${machine.node}, loadavg ${machine.loadAvgAtStart.toFixed(2)}`);
  console.log(peer.file ? `upstream: ${peer.file}` : `upstream: skipped (peer not found at ${peer.lookedAt})`);
  const poolWorkers = Math.max(...workerCounts);
  const scaling = poolWorkers > 1 ? await probeScaling(fixtureOf(presets[0]!, seed).file, poolWorkers) : undefined;
  if (scaling) {
    console.log(
      `thread scaling here (${scaling.threads} threads at once vs one): JSON.parse ${scaling.parseSpeedup.toFixed(2)}×, the shard scan ${scaling.scanSpeedup.toFixed(2)}×, ` +
        `arithmetic ${scaling.arithmeticSpeedup.toFixed(2)}× (the scan figure bounds what workers can gain on the scan)`,
    );
  }
  const summaries: FixtureSummary[] = [];
  const raw: Record<string, FixtureRuns> = {};
  for (const preset of presets) {
    const fixture = fixtureOf(preset, seed);
    console.log(`\n${preset}: ${fixture.file} (${(fixture.bytes / 1e6).toFixed(1)} MB), ${iterations} round(s)`);
    raw[preset] = await runRounds({ fixture: fixture.file, iterations, workerCounts, cliFile, ...(peer.file ? { peerFile: peer.file } : {}) });
    summaries.push(summarizeFixture(fixture.label, raw[preset]!));
  }
  const targets: TargetRow[] = summaries.flatMap((s) => judgeFixture(s, peer.file !== undefined));
  console.log(`\nWhole process, medians of ${iterations} interleaved round(s) (EL max and report RSS: chainpress's --json report)\n${contenderTable(summaries)}`);
  console.log(`\nchainpress's wall time by phase, medians (start + exit: the process's wall outside the compaction; the rest: its --json report's phaseMs)\n${phaseTable(summaries)}`);
  console.log(`\nIssue-10 targets (ratios measured in this run; wall ratios: median of per-round ratios)\n${targetTable(targets)}`);
  const command = reproduceCommand(presets, iterations, workerCounts, seed, values.peer);
  const file = writeResults({ command, startedAt, machine, scaling, loadAvgAtEnd: os.loadavg()[0], source: sourceInfo(root), peer, seed, workerCounts, iterations, summaries, targets, raw });
  console.log(`\nwrote ${path.relative(process.cwd(), file)}\nreproduce: ${command}`);
}

function positiveInt(text: string, flag: string): number {
  const n = nonNegativeInt(text, flag);
  if (n === 0) throw new Error(`${flag} must be at least 1`);
  return n;
}

function nonNegativeInt(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${flag}: expected a non-negative integer, got ${JSON.stringify(text)}`);
  return n;
}

function reproduceCommand(presets: readonly string[], iterations: number, workers: readonly number[], seed: number, peerFlag: string | undefined): string {
  const peer = peerFlag ? ` --peer ${JSON.stringify(path.resolve(peerFlag))}` : process.env.CHAINPRESS_PEER ? ` --peer ${JSON.stringify(process.env.CHAINPRESS_PEER)}` : "";
  return `npm run bench:compare -- ${presets.join(" ")} --iterations ${iterations} --workers ${workers.join(",")} --seed ${seed}${peer}`;
}

function writeResults(results: { startedAt: string } & Record<string, unknown>): string {
  const dir = path.join(repoRoot(), "bench", "out");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `compare-${results.startedAt.replace(/[:.]/g, "-")}.json`);
  // A failed run's stderr says why; a successful run's is bulky (upstream's report) and summarised.
  const replacer = function (this: { ok?: boolean }, key: string, value: unknown) {
    return key === "stderr" && this.ok === true ? undefined : value;
  };
  fs.writeFileSync(file, `${JSON.stringify(results, replacer, 2)}\n`);
  return file;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
