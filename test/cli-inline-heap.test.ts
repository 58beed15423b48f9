// The heap bound for large inline compactions (src/cli/inline-heap.ts): when it applies, and that
// the flag it sets still bounds V8's heap when set at run time in this Node.

import { spawnSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { heapGrowingPercentFor, INLINE_BOUNDED_HEAP_MIN_BYTES, INLINE_HEAP_GROWING_PERCENT } from "../src/cli/inline-heap.js";
import { ensureBuilt, ROOT } from "./helpers/cli-harness.js";

beforeAll(() => ensureBuilt());

describe("heapGrowingPercentFor", () => {
  it("bounds the heap's growth only for a large session compacted inline", () => {
    expect(heapGrowingPercentFor(0, INLINE_BOUNDED_HEAP_MIN_BYTES)).toBe(INLINE_HEAP_GROWING_PERCENT);
    expect(heapGrowingPercentFor(0, 400 * 1024 * 1024)).toBe(INLINE_HEAP_GROWING_PERCENT);
    expect(heapGrowingPercentFor(0, INLINE_BOUNDED_HEAP_MIN_BYTES - 1)).toBe(0);
    expect(heapGrowingPercentFor(1, 400 * 1024 * 1024)).toBe(0);
    expect(heapGrowingPercentFor(2, INLINE_BOUNDED_HEAP_MIN_BYTES)).toBe(0);
  });
});

/**
 * A child holds ~100 MB of live objects (a session's model), then allocates objects that outlive a
 * few scavenges and die (a chain task's), as an inline run does; it prints the heap's peak size.
 */
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
  const module = pathToFileURL(path.join(ROOT, "dist", "src", "cli", "inline-heap.js")).href;
  const result = spawnSync(process.execPath, ["--max-semi-space-size=3", "--input-type=module", "-e", CHILD, mode], {
    encoding: "utf8",
    env: { ...process.env, INLINE_HEAP_MODULE: module },
  });
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  return JSON.parse(result.stdout) as { held: number; peak: number };
}

describe("setHeapGrowingPercent", () => {
  it("keeps the heap near what is live, where V8's own factor lets it grow far past it", () => {
    const free = peakHeap("free");
    const bound = peakHeap("bound");
    // Measured: free 4.4-5.1x what is held, bound 1.7x (2.0x once, beside the whole suite): the
    // margins are for a loaded machine; without the flag both peaks are alike.
    expect(bound.peak).toBeLessThan(bound.held * 3);
    expect(bound.peak).toBeLessThan(free.peak * 0.75);
  });
});
