import { describe, expect, it } from "vitest";
import { BufferPool } from "../src/io/buffer-pool.js";

// Identity is compared as booleans: a failing toBe (what .not.toBe passes on) deep-compares two
// buffers byte by byte, ~15 s for megabytes.
describe("BufferPool", () => {
  it("hands a given-back buffer out again when it is large enough", () => {
    const pool = new BufferPool(2, 1 << 20);
    const first = pool.take(100_000);
    expect(first.length).toBeGreaterThanOrEqual(100_000);
    pool.give(first);
    expect(pool.take(90_000)).toBe(first);
    // Taken and not given back: the next request gets another buffer.
    expect(pool.take(90_000) === first).toBe(false);
  });

  it("never hands out one buffer twice at once", () => {
    const pool = new BufferPool(2, 1 << 20);
    const a = pool.take(1000);
    const b = pool.take(1000);
    expect(a.buffer === b.buffer).toBe(false);
    pool.give(a);
    pool.give(b);
    const again = [pool.take(1000), pool.take(1000)];
    expect(again.includes(a) && again.includes(b)).toBe(true);
  });

  it("keeps at most `keep` buffers, the largest, and none above its limit", () => {
    const pool = new BufferPool(1, 1 << 20);
    const small = pool.take(1000);
    const large = pool.take(500_000);
    pool.give(small);
    pool.give(large);
    expect(pool.take(10)).toBe(large);
    const huge = pool.take(2 << 20);
    expect(huge.length).toBe(2 << 20);
    pool.give(huge);
    expect(pool.take(2 << 20) === huge).toBe(false);
  });

  it("takeLargest hands out the largest buffer kept, each once, and nothing when empty", () => {
    const pool = new BufferPool(3, 1 << 20);
    expect(pool.takeLargest()).toBeUndefined();
    const [a, b, c] = [pool.take(1000), pool.take(300_000), pool.take(70_000)];
    for (const buffer of [a, b, c]) pool.give(buffer);
    expect(pool.takeLargest()).toBe(b);
    expect(pool.takeLargest()).toBe(c);
    expect(pool.takeLargest()).toBe(a);
    expect(pool.takeLargest()).toBeUndefined();
  });
});
