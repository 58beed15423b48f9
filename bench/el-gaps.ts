/**
 * `node --cpu-prof --cpu-prof-dir=bench/out/prof dist/bench/el-gaps.js SESSION [workers] [gaps.json]`
 * Compacts SESSION in this process (compact it on a copy: it is written to) while a 1 ms timer
 * records every event-loop stall over 25 ms, on the clock `--cpu-prof` uses, into gaps.json
 * (default bench/out/el-gaps.json). `node dist/bench/blocks.js <main profile> 8 --gaps gaps.json`
 * then names what ran in each stall.
 */

import fs from "node:fs";
import path from "node:path";
import { createChainRunner } from "../src/main/chain-runner.js";
import { compactSession } from "../src/main/compact-session.js";

export interface Gap {
  /** Start of the stall, in microseconds of CLOCK_MONOTONIC (a CPU profile's clock). */
  startUs: number;
  ms: number;
}

const STALL_MS = 25;

async function main(file: string, workers: number, out: string): Promise<void> {
  const runner = createChainRunner(workers);
  const gaps: Gap[] = [];
  let last = process.hrtime.bigint();
  const timer = setInterval(() => {
    const now = process.hrtime.bigint();
    const ms = Number(now - last) / 1e6;
    if (ms > STALL_MS) gaps.push({ startUs: Number(last / 1000n), ms });
    last = now;
  }, 1);
  try {
    const report = await compactSession({ file, runner });
    console.log(`event-loop max (report): ${report.eventLoopMaxMs.toFixed(1)} ms; ${gaps.length} stall(s) over ${STALL_MS} ms`);
  } finally {
    clearInterval(timer);
    await runner.close();
  }
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(gaps));
  console.log(`wrote ${out}`);
}

const [file, workers = "2", out = path.join("bench", "out", "el-gaps.json")] = process.argv.slice(2);
if (!file) throw new Error("usage: el-gaps.js SESSION [workers] [gaps.json]");
await main(file, Number(workers), out);
