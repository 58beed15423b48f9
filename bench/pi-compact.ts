/**
 * `npm run bench:pi -- [presets...] [--iterations N] [--workers 0,2] [--seed N]`
 * `/pruner compact` inside the real pi (rpc mode, offline): pi opens a copy of the fixture as its
 * session, loads chainpress from this checkout, and the command compacts every closed chain. The
 * figures are the ones `/pruner status` reports for that compact (extension/commands.ts measures
 * them while it runs on pi's event loop): wall time, event-loop max delay, peak RSS. pi's own
 * start-up and session load are not part of them. Default preset: 20x1M.
 * Prints a table and writes bench/out/pi-compact-<time>.json.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { ensureFixture, repoRoot } from "./fixtures/fixture-cache.js";
import { DEFAULT_SEED } from "./fixtures/presets.js";
import { machineInfo, sourceInfo } from "./lib/machine.js";
import { piEnv, writeAgentDir } from "./lib/pi-agent-dir.js";
import { startPiRpc } from "./lib/pi-rpc.js";
import { median } from "./lib/stats.js";
import { markdownTable } from "./lib/table.js";

interface PiCompactRun {
  workers: number;
  wallMs: number;
  eventLoopMaxMs: number;
  peakRssMb: number;
  chains: number;
  /** Of them, chains the workers read from the session file (the others pi's thread encoded). */
  chainsFromFile: number;
}

/** The status line extension/status.ts writes after a compact. */
const LAST_COMPACT = /^last compact: (\d+) chains?(?: \((\d+) read from the session file\))? in (\d+\.\d+) s, event loop max (\d+) ms, peak RSS (\d+) MB$/m;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { iterations: { type: "string" }, workers: { type: "string" }, seed: { type: "string" } } });
  const presets = positionals.length > 0 ? positionals : ["20x1M"];
  const iterations = Number(values.iterations ?? "2");
  const workerCounts = (values.workers ?? "0,2").split(",").map(Number);
  const seed = values.seed === undefined ? DEFAULT_SEED : Number(values.seed);
  if (!Number.isInteger(iterations) || iterations < 1 || workerCounts.some((w) => !Number.isInteger(w) || w < 0) || !Number.isInteger(seed)) {
    throw new Error("--iterations: a positive integer; --workers: non-negative integers separated by commas; --seed: an integer");
  }
  const root = repoRoot();
  const rows: string[][] = [];
  const raw: Record<string, PiCompactRun[]> = {};
  for (const preset of presets) {
    const fixture = ensureFixture(preset, seed);
    const runs: PiCompactRun[] = [];
    // Interleaved: each round runs every worker count once, so they share the same minutes.
    for (let round = 0; round < iterations; round++) for (const workers of workerCounts) runs.push(await compactInPi(root, fixture.file, workers));
    raw[preset] = runs;
    for (const workers of workerCounts) {
      const mine = runs.filter((run) => run.workers === workers);
      const med = (key: keyof PiCompactRun) => median(mine.map((run) => run[key])).toFixed(0);
      rows.push([preset, String(workers), med("wallMs"), med("eventLoopMaxMs"), String(Math.max(...mine.map((run) => run.eventLoopMaxMs)).toFixed(0)), med("peakRssMb"), String(mine[0]!.chains), String(mine[0]!.chainsFromFile)]);
    }
  }
  console.log(`\n/pruner compact inside pi, medians of ${iterations} interleaved round(s)\n`);
  console.log(markdownTable(["fixture", "workers", "wall ms", "EL max ms", "EL max ms (worst)", "peak RSS MB", "chains", "read from the file"], rows));
  const file = path.join(root, "bench", "out", `pi-compact-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ machine: machineInfo(), source: sourceInfo(root), seed, iterations, workerCounts, raw }, null, 2)}\n`);
  console.log(`\nwrote ${path.relative(process.cwd(), file)}`);
}

/** One fresh pi on one fresh copy of the fixture: `/pruner compact`, then `/pruner status` for its figures. */
async function compactInPi(root: string, fixture: string, workers: number): Promise<PiCompactRun> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-pi-bench-"));
  try {
    const agentDir = path.join(home, "agent");
    // The model is never called: nothing listens on this port.
    writeAgentDir(agentDir, "http://127.0.0.1:9/v1", { workers });
    const session = path.join(home, "session.jsonl");
    copyWithCwd(fixture, session, home);
    const pi = startPiRpc({ cwd: home, env: piEnv(agentDir, home), args: ["-e", root, "--session", session] });
    try {
      // pi loads the whole session before it answers: ~15 s for 200x1M's 396 MB here.
      const waitMs = 30_000 + fs.statSync(session).size / 4000;
      await pi.command("/pruner compact", /^pruner: (compacted|no chains)/, waitMs);
      const status = await pi.command("/pruner status", LAST_COMPACT, waitMs);
      const [, chains, fromFile, seconds, elMax, rss] = LAST_COMPACT.exec(status)!;
      return { workers, wallMs: Number(seconds) * 1000, eventLoopMaxMs: Number(elMax), peakRssMb: Number(rss), chains: Number(chains), chainsFromFile: Number(fromFile ?? 0) };
    } finally {
      await pi.close();
    }
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** pi refuses a session whose working folder is gone: the copy's header names the bench's folder. */
function copyWithCwd(fixture: string, target: string, cwd: string): void {
  const data = fs.readFileSync(fixture);
  const newline = data.indexOf(0x0a);
  const header = JSON.parse(data.subarray(0, newline).toString("utf8")) as Record<string, unknown>;
  fs.writeFileSync(target, Buffer.concat([Buffer.from(JSON.stringify({ ...header, cwd }), "utf8"), data.subarray(newline)]));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
