/**
 * `npm run bench:cost`: the cost replay (issue 47) over the real sessions in
 * `fixtures/real-pi-sessions/`, through the built CLI (`chainpress cost --json`), under both cache
 * lifetimes. Prints one table: the recorded bill, the as-run replay's error, chainpress live's bill
 * and saving, its compressions and how many paid back.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { repoRoot } from "./fixtures/fixture-cache.js";
import { markdownTable } from "./lib/table.js";

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
  const cli = path.join(repoRoot(), "dist", "src", "bin", "main.js");
  const run = spawnSync(process.execPath, [cli, "cost", "--json", "--cache-ttl", ttl, folder], { encoding: "utf8", maxBuffer: 1 << 28 });
  if (run.status !== 0) throw new Error(`chainpress cost failed (${run.status}): ${run.stderr}`);
  return (JSON.parse(run.stdout) as { sessions: CostRow[] }).sessions;
}

const usd = (value: number) => `$${value.toFixed(2)}`;
const pct = (value: number) => `${(value * 100).toFixed(1)}%`;

function main(): void {
  const folder = path.join(repoRoot(), "fixtures", "real-pi-sessions");
  if (!fs.existsSync(folder)) throw new Error(`${folder}: not found`);
  const rows: string[][] = [];
  for (const ttl of ["5m", "1h"] as const) {
    for (const s of costOf(folder, ttl)) {
      const live = s.chainpressCost === null ? "n/a" : `${usd(s.chainpressCost)} (${pct(s.savingPercent ?? 0)} saved)`;
      const paid = s.compressions === null ? "n/a" : `${s.paidBack} of ${s.compressions}`;
      rows.push([path.basename(s.file), ttl, String(s.requests), usd(s.recordedCost), pct((s.asRunCost - s.recordedCost) / s.recordedCost), usd(s.asRunCost), live, paid]);
    }
  }
  console.log(markdownTable(["session", "cache", "requests", "recorded", "as-run error", "as run", "chainpress live", "paid back"], rows));
}

main();
