/**
 * `npm run bench:ab -- --against DIR [presets or session files...] [--workers 2] [--iterations 3] [--seed N]`
 * A/B of two builds of chainpress on the same fixtures: this checkout's CLI and DIR's (another
 * checkout or worktree, built), run alternately in fresh processes on fresh copies, A first in
 * odd rounds and B first in even ones, so both see the same minutes of this shared machine. Prints
 * medians, and the median and range of per-round ratios (B / A) of wall time, CPU and peak RSS: how a
 * tuning is judged (ARCHITECTURE's decisions table).
 */

import path from "node:path";
import { parseArgs } from "node:util";
import { fixtureOf, repoRoot } from "./fixtures/fixture-cache.js";
import { DEFAULT_SEED } from "./fixtures/presets.js";
import { builtCli } from "./lib/built-cli.js";
import { cliNodeFlags } from "./lib/cli-node-flags.js";
import { runMeasured, type ProcessMeasure } from "./lib/measured-process.js";
import { freshCopy } from "./lib/scratch-copy.js";
import { median } from "./lib/stats.js";
import { markdownTable } from "./lib/table.js";

async function runOnce(cli: string, fixture: string, workers: number, label: string): Promise<ProcessMeasure> {
  const copy = freshCopy(fixture, label);
  try {
    const measure = await runMeasured({ script: cli, nodeFlags: cliNodeFlags(cli), args: ["compact", copy.file, "--workers", String(workers), "--force", "--json"], stdoutFile: path.join(copy.dir, "out.json"), scratchDir: copy.dir });
    if (measure.exitCode !== 0) throw new Error(`${cli} failed on ${fixture}: ${measure.stderr.slice(-2000)}`);
    return measure;
  } finally {
    copy.remove();
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { against: { type: "string" }, workers: { type: "string" }, iterations: { type: "string" }, seed: { type: "string" } } });
  if (!values.against) throw new Error("--against DIR: the other checkout (built with npm run build)");
  const cliA = builtCli(repoRoot());
  const cliB = builtCli(path.resolve(values.against));
  const workers = Number(values.workers ?? 2);
  const iterations = Number(values.iterations ?? 3);
  const seed = values.seed === undefined ? DEFAULT_SEED : Number(values.seed);
  const rows = [];
  for (const preset of positionals.length > 0 ? positionals : ["20x1M", "20x300-100M"]) {
    const fixture = fixtureOf(preset, seed).file;
    const a: ProcessMeasure[] = [];
    const b: ProcessMeasure[] = [];
    for (let round = 0; round < iterations; round++) {
      // Compared by side, not by path: an A/A run (the same checkout twice) measures the noise.
      const sides = round % 2 === 0 ? (["a", "b"] as const) : (["b", "a"] as const);
      for (const side of sides) (side === "a" ? a : b).push(await runOnce(side === "a" ? cliA : cliB, fixture, workers, side));
    }
    // The median of per-round ratios, and their range: how far apart one round's two runs can be.
    const ratio = (pick: (m: ProcessMeasure) => number) => {
      const perRound = a.map((m, i) => pick(b[i]!) / pick(m));
      return `${median(perRound).toFixed(3)} (${Math.min(...perRound).toFixed(2)}-${Math.max(...perRound).toFixed(2)})`;
    };
    rows.push([
      preset,
      `${Math.round(median(a.map((m) => m.wallMs)))} / ${Math.round(median(b.map((m) => m.wallMs)))}`,
      ratio((m) => m.wallMs),
      ratio((m) => m.cpuMs),
      `${Math.round(median(a.map((m) => m.peakRssBytes)) / 1e6)} / ${Math.round(median(b.map((m) => m.peakRssBytes)) / 1e6)}`,
      ratio((m) => m.peakRssBytes),
    ]);
    console.log(`${preset}: done`);
  }
  console.log(`\nA: ${repoRoot()}\nB: ${path.resolve(values.against)}\n--workers ${workers}, ${iterations} interleaved rounds\n`);
  console.log(markdownTable(["session", "wall ms A / B", "wall B/A", "CPU B/A", "peak RSS MB A / B", "RSS B/A"], rows));
}

await main();
