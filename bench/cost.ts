/**
 * `npm run bench:cost`: the cost replay (issue 47) over the real sessions in
 * `fixtures/real-pi-sessions/`, through the built CLI (`chainpress cost --json`), under both cache
 * lifetimes. Prints one table: the recorded bill, the as-run replay's error, chainpress live's bill
 * and saving, its compressions and how many paid back. Then its speed: `chainpress cost` against
 * `chainpress compact --out` on the 116 MB generated session (20x300-100M, seed 6), both as whole
 * processes, interleaved over three rounds; the ratio of their medians (target: at most 2).
 * `--no-speed` skips that part.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import { ensureFixture, repoRoot } from "./fixtures/fixture-cache.js";
import { markdownTable } from "./lib/table.js";
import { builtCli } from "./lib/built-cli.js";

interface CostRow {
  file: string;
  requests: number;
  recordedCost: number;
  asRunCost: number;
  chainpressCost: number | null;
  savingPercent: number | null;
  compressions: number | null;
  paidBack: number | null;
}

function costOf(folder: string, ttl: "5m" | "1h"): CostRow[] {
  const run = spawnSync(process.execPath, [cliPath(), "cost", "--json", "--cache-ttl", ttl, folder], { encoding: "utf8", maxBuffer: 1 << 28 });
  if (run.status !== 0) throw new Error(`chainpress cost failed (${run.status}): ${run.stderr}`);
  return (JSON.parse(run.stdout) as { sessions: CostRow[] }).sessions;
}

const usd = (value: number) => `$${value.toFixed(2)}`;
const pct = (value: number) => `${(value * 100).toFixed(1)}%`;

function cliPath(): string {
  return builtCli(repoRoot());
}

/** Wall milliseconds of one whole CLI process. */
function wallMs(args: string[]): number {
  const start = process.hrtime.bigint();
  const run = spawnSync(process.execPath, [cliPath(), ...args], { encoding: "utf8", maxBuffer: 1 << 28 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (run.status !== 0) throw new Error(`chainpress ${args[0]} failed (${run.status}): ${run.stderr}`);
  return ms;
}

const medianOf = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

function speed(): void {
  const { file } = ensureFixture("20x300-100M", 6);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-bench-cost-"));
  const cost: number[] = [];
  const compact: number[] = [];
  try {
    for (let round = 0; round < 3; round++) {
      cost.push(wallMs(["cost", "--json", file]));
      const out = path.join(scratch, `copy-${round}.jsonl`);
      compact.push(wallMs(["compact", "--json", "--out", out, file]));
      fs.rmSync(scratch, { recursive: true, force: true });
      fs.mkdirSync(scratch);
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const ratio = medianOf(cost) / medianOf(compact);
  console.log(`\n116 MB session (${path.basename(file)}): cost ${medianOf(cost).toFixed(0)} ms, compact --out ${medianOf(compact).toFixed(0)} ms (medians of 3, interleaved): cost/compact ${ratio.toFixed(2)} (target ≤ 2)`);
}

function main(): void {
  const folder = path.join(repoRoot(), "fixtures", "real-pi-sessions");
  if (!fs.existsSync(folder)) throw new Error(`${folder}: not found`);
  const rows: string[][] = [];
  for (const ttl of ["5m", "1h"] as const) {
    for (const s of costOf(folder, ttl)) {
      const live = s.chainpressCost === null ? "n/a" : `${usd(s.chainpressCost)} (${pct(s.savingPercent ?? 0)} saved)`;
      const paid = s.compressions === null ? "n/a" : `${s.paidBack} of ${s.compressions}`;
      // The recording was billed under a 5-minute cache: only that replay can check against it.
      const error = ttl === "5m" ? pct((s.asRunCost - s.recordedCost) / s.recordedCost) : "n/a";
      rows.push([path.basename(s.file), ttl, String(s.requests), usd(s.recordedCost), error, usd(s.asRunCost), live, paid]);
    }
  }
  console.log(markdownTable(["session", "cache", "requests", "recorded", "as-run error", "as run", "chainpress live", "paid back"], rows));
  if (!process.argv.includes("--no-speed")) speed();
}

main();
