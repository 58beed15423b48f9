/**
 * `npm run bench:find [-- --presets default,one-640,20x300-100M] [--seed N]`
 * The findable archive (issue 39) on generated sessions, each compacted by the CLI in a fresh
 * process first:
 *   - findability (top-3 rank of an output's unique line; every call on a path found by it),
 *     measured where the archive is small enough to search once per output (up to ~5M chars);
 *   - map coverage and cost in the rendered context;
 *   - a literal search of the whole archive on a pool of two worker threads, against the wall time
 *     of compacting that session in the same run, with this thread's longest stall meanwhile
 *     (what pi's thread would see: the extension runs the same search).
 * Prints a table and writes bench/out/find-<time>.json.
 */

import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { checkPattern, type SearchPattern } from "../src/core/archive-search.js";
import { loadHasher } from "../src/core/digest.js";
import { resolveRecordBody } from "../src/io/read-spill.js";
import { createChainRunner } from "../src/main/chain-runner.js";
import { renderContext } from "../src/main/context-size.js";
import { startLoadMonitor } from "../src/main/load-monitor.js";
import { searchArchive } from "../src/main/search-archive.js";
import { loadSessionModel } from "../src/main/session-model.js";
import { ensureFixture, repoRoot } from "./fixtures/fixture-cache.js";
import { builtCli } from "./lib/built-cli.js";
import { DEFAULT_SEED } from "./fixtures/presets.js";
import { archivedOutputs, measureFindability, measureMapCoverage } from "./lib/findability.js";
import { runMeasured } from "./lib/measured-process.js";
import { freshCopy } from "./lib/scratch-copy.js";
import { markdownTable } from "./lib/table.js";

/** Archives larger than this are not searched once per output (that would take hours). */
const FINDABILITY_MAX_CHARS = 5_000_000;
const SEARCH_TEXT = "session file";

async function measurePreset(name: string, seed: number) {
  const fixture = ensureFixture(name, seed);
  const copy = freshCopy(fixture.file, `find-${name}`);
  try {
    const cli = builtCli(repoRoot());
    const compact = await runMeasured({ script: cli, args: ["compact", copy.file, "--force", "--json"], stdoutFile: path.join(copy.dir, "compact.json"), scratchDir: copy.dir });
    if (compact.exitCode !== 0) throw new Error(`compact failed: ${compact.stderr}`);
    const model = await loadSessionModel(copy.file);
    const hasher = await loadHasher();
    const texts = new Map<string, string>();
    let archivedChars = 0;
    for (const [key, record] of model.state.records) {
      const body = await resolveRecordBody(record, hasher, model.blobDir);
      if (!body.ok) throw new Error(`${key}: ${body.detail}`);
      texts.set(key, body.text);
      archivedChars += body.text.length;
    }
    const outputs = archivedOutputs(model, texts);
    const findability = archivedChars <= FINDABILITY_MAX_CHARS ? measureFindability(outputs) : undefined;
    const coverage = measureMapCoverage(renderContext(model), outputs);
    const search = await timeSearch(model);
    return { name, bytes: fixture.summary.bytes, outputs: outputs.length, spilled: [...model.state.records.values()].filter((r) => r.spillPath).length, archivedChars, compactWallMs: compact.wallMs, findability, coverage, search };
  } finally {
    copy.remove();
  }
}

/** A cold search (the pool started for it) and a warm one, with this thread's longest stall. */
async function timeSearch(model: Awaited<ReturnType<typeof loadSessionModel>>) {
  const pattern = checkPattern(SEARCH_TEXT, false) as SearchPattern;
  const monitor = startLoadMonitor();
  const started = performance.now();
  const runner = createChainRunner(2);
  try {
    const scope = { state: model.state, editedOutputs: model.editedOutputs, blobDir: model.blobDir, runner };
    const cold = await searchArchive(scope, { pattern, limit: 10 });
    const coldMs = performance.now() - started;
    const warmStart = performance.now();
    await searchArchive(scope, { pattern, limit: 10 });
    const warmMs = performance.now() - warmStart;
    return { coldMs, warmMs, hits: cold.total, eventLoopMaxMs: monitor.stop().eventLoopMaxMs };
  } finally {
    await runner.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { presets: { type: "string" }, seed: { type: "string" } } });
  const seed = values.seed === undefined ? DEFAULT_SEED : Number(values.seed);
  const names = (values.presets ?? "default,one-640,20x300-100M").split(",");
  const results = [];
  for (const name of names) results.push(await measurePreset(name, seed));
  const pct = (part: number, whole: number) => (whole === 0 ? "-" : `${((100 * part) / whole).toFixed(1)}%`);
  const rows = results.map((r) => [
    r.name,
    (r.bytes / 1e6).toFixed(1),
    `${r.outputs} (${r.spilled} spilled)`,
    r.findability ? `${r.findability.inTop3}/${r.findability.withUniqueLine} = ${pct(r.findability.inTop3, r.findability.withUniqueLine)}` : "not measured",
    r.findability ? `${r.findability.pathsFoundWhole}/${r.findability.paths}` : "-",
    `${r.coverage.fileCallsOnOneLine}/${r.coverage.fileCalls} = ${pct(r.coverage.fileCallsOnOneLine, r.coverage.fileCalls)} (${r.coverage.uncut}/${r.coverage.chains} chains uncut)`,
    pct(r.coverage.mapChars, r.coverage.mappedChars),
    `${Math.round(r.search.coldMs)} / ${Math.round(r.search.warmMs)}`,
    Math.round(r.compactWallMs),
    (r.search.coldMs / r.compactWallMs).toFixed(2),
    r.search.eventLoopMaxMs.toFixed(1),
  ]);
  const headers = ["session", "MB", "archived outputs", "unique line in top 3", "paths found whole", "file calls with ref+name on one line", "map cost", "search ms cold/warm", "compact ms", "search/compact", "stall ms"];
  console.log(markdownTable(headers, rows));
  const out = path.join(repoRoot(), "bench", "out");
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, `find-${new Date().toISOString().replace(/[:.]/g, "-")}.json`), `${JSON.stringify({ seed, searchText: SEARCH_TEXT, results }, null, 2)}\n`);
}

await main();
