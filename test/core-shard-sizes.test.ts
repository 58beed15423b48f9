// The scan's shard sizes (core/shard-sizes.ts): full-size shards while much of the file is left,
// shrinking over the tail so that the workers, taking shards in order as they come free, finish
// close together.

import { describe, expect, it } from "vitest";
import { guidedShardSizes, MIN_SHARD_BYTES, SHARD_BYTES, type ShardSizer } from "../src/core/shard-sizes.js";

/** The shards' sizes from the start of a file of `fileBytes` (cut anywhere: a file of one-byte lines). */
function sizesOf(fileBytes: number, sizeAt: ShardSizer): number[] {
  const sizes: number[] = [];
  for (let start = 0; start < fileBytes; ) {
    const size = Math.min(fileBytes - start, sizeAt(start));
    sizes.push(size);
    start += size;
  }
  return sizes;
}

/**
 * How long after a perfectly even split the last of `workers` finishes, each taking the next shard
 * when it comes free, a shard taking as long as it has bytes.
 */
function straggle(sizes: readonly number[], workers: number): number {
  const busyUntil = new Array<number>(workers).fill(0);
  for (const size of sizes) {
    const next = busyUntil.indexOf(Math.min(...busyUntil));
    busyUntil[next]! += size;
  }
  const total = sizes.reduce((sum, size) => sum + size, 0);
  return Math.max(...busyUntil) - total / workers;
}

const MiB = 1024 * 1024;

describe("guidedShardSizes", () => {
  it("is SHARD_BYTES while much of the file is left, then shrinks, never under MIN_SHARD_BYTES", () => {
    const sizes = sizesOf(100 * MiB, guidedShardSizes(100 * MiB, 2));
    expect(sizes.slice(0, 40).every((size) => size === SHARD_BYTES)).toBe(true);
    for (let i = 1; i < sizes.length; i++) expect(sizes[i]!).toBeLessThanOrEqual(sizes[i - 1]!);
    expect(sizes.slice(0, -1).every((size) => size >= MIN_SHARD_BYTES)).toBe(true);
    expect(sizes.at(-2)).toBe(MIN_SHARD_BYTES);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(100 * MiB);
  });

  it("leaves no worker more than a smallest shard behind the others", () => {
    for (const workers of [1, 2, 3, 8, 15]) {
      for (const fileBytes of [3 * MiB, 20 * MiB + 12345, 39_699_941, 116_005_869, 395_747_410]) {
        const spread = straggle(sizesOf(fileBytes, guidedShardSizes(fileBytes, workers)), workers);
        expect(spread, `${workers} workers, ${fileBytes} bytes`).toBeLessThanOrEqual(MIN_SHARD_BYTES);
      }
    }
    // Shards of one size leave a straggler most of a shard behind.
    expect(straggle(sizesOf(39_699_941, () => SHARD_BYTES), 2)).toBeGreaterThan(MIN_SHARD_BYTES);
  });

  it("inline, every shard is the full size", () => {
    const sizeAt = guidedShardSizes(100 * MiB, 0);
    expect([0, 99 * MiB, 100 * MiB - 1].map(sizeAt)).toEqual([SHARD_BYTES, SHARD_BYTES, SHARD_BYTES]);
  });

  it("takes a smaller maximum, and its floor never exceeds it", () => {
    const sizes = sizesOf(10 * MiB, guidedShardSizes(10 * MiB, 4, 64 * 1024));
    expect(Math.max(...sizes)).toBe(64 * 1024);
    expect(sizes.slice(0, -1).every((size) => size === 64 * 1024)).toBe(true);
  });
});
