// The heap bound for large compactions (src/cli/inline-heap.ts): when it applies, and that
// the flag it sets is one this Node's V8 knows. What the bound does to the heap is measured by
// bench/heap-growth.ts.

import { spawnSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { BOUNDED_HEAP_GROWING_PERCENT, heapGrowingPercentFor, INLINE_BOUNDED_HEAP_MIN_BYTES, POOL_BOUNDED_HEAP_MIN_BYTES } from "../src/cli/inline-heap.js";
import { ensureBuilt, ROOT } from "./helpers/cli-harness.js";

beforeAll(() => ensureBuilt());

describe("heapGrowingPercentFor", () => {
  it("bounds the heap's growth only for a large session: from 128 MiB inline, from 64 MiB with a pool", () => {
    expect(heapGrowingPercentFor(0, INLINE_BOUNDED_HEAP_MIN_BYTES)).toBe(BOUNDED_HEAP_GROWING_PERCENT);
    expect(heapGrowingPercentFor(0, 400 * 1024 * 1024)).toBe(BOUNDED_HEAP_GROWING_PERCENT);
    expect(heapGrowingPercentFor(0, INLINE_BOUNDED_HEAP_MIN_BYTES - 1)).toBe(0);
    expect(heapGrowingPercentFor(0, POOL_BOUNDED_HEAP_MIN_BYTES)).toBe(0);
    expect(heapGrowingPercentFor(1, 400 * 1024 * 1024)).toBe(BOUNDED_HEAP_GROWING_PERCENT);
    expect(heapGrowingPercentFor(2, POOL_BOUNDED_HEAP_MIN_BYTES)).toBe(BOUNDED_HEAP_GROWING_PERCENT);
    expect(heapGrowingPercentFor(2, POOL_BOUNDED_HEAP_MIN_BYTES - 1)).toBe(0);
  });
});

/** The flag the bound sets, set at run time in a child of this Node: V8 warns of a flag it does not know. */
describe("setHeapGrowingPercent", () => {
  it("sets a flag this Node's V8 knows (the bound's effect is measured by bench/heap-growth.ts)", () => {
    const module = pathToFileURL(path.join(ROOT, "dist", "src", "cli", "inline-heap.js")).href;
    const child = `const { setHeapGrowingPercent } = await import(process.env.INLINE_HEAP_MODULE); setHeapGrowingPercent(35); setHeapGrowingPercent(0); console.log("set");`;
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", child], { encoding: "utf8", env: { ...process.env, INLINE_HEAP_MODULE: module } });
    expect([result.status, result.stderr, result.stdout]).toEqual([0, "", "set\n"]);
  });
});
