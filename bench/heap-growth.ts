/**
 * `npm run build && node dist/bench/heap-growth.js`
 * What the inline heap bound (src/cli/inline-heap.ts) does to V8's heap in this Node: a child
 * holds ~100 MB of live objects (a session's model), then allocates objects that outlive a few
 * scavenges and die (a chain task's), as an inline run does, with and without the bound; prints
 * each peak against what is live. The bound earned its place by keeping 200x1M's `--workers 0`
 * peak within budget (bench/RESULTS.md, tunings re-measured).
 */

import { spawnSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { repoRoot } from "./fixtures/fixture-cache.js";

const CHILD = `
import v8 from "node:v8";
const { setHeapGrowingPercent } = await import(process.env.INLINE_HEAP_MODULE);
if (process.argv[1] === "bound") setHeapGrowingPercent(35);
const live = [];
for (let i = 0; i < 6e5; i++) live.push({ a: i, b: [i, i + 1] });
const held = v8.getHeapStatistics().used_heap_size;
let peak = 0;
for (let round = 0; round < 30; round++) {
  const task = [];
  for (let j = 0; j < 2e5; j++) task.push({ a: j, b: [j, round] });
  peak = Math.max(peak, v8.getHeapStatistics().total_heap_size);
}
console.log(JSON.stringify({ held, peak, live: live.length }));
`;

function peakHeap(mode: "bound" | "free"): { held: number; peak: number } {
  const module = pathToFileURL(path.join(repoRoot(), "dist", "src", "cli", "inline-heap.js")).href;
  const result = spawnSync(process.execPath, ["--max-semi-space-size=3", "--input-type=module", "-e", CHILD, mode], { encoding: "utf8", env: { ...process.env, INLINE_HEAP_MODULE: module } });
  if (result.status !== 0 || result.stderr !== "") throw new Error(`child failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as { held: number; peak: number };
}

for (const mode of ["free", "bound"] as const) {
  const { held, peak } = peakHeap(mode);
  console.log(`${mode}: live ${(held / 1e6).toFixed(0)} MB, heap peak ${(peak / 1e6).toFixed(0)} MB (${(peak / held).toFixed(2)}x)`);
}
