// bench:check's verdict: margins come from measured run-to-run spread, and only a ratio above
// baseline × (1 + margin) fails.
import { describe, expect, it } from "vitest";
import { compareToBaseline, marginsFrom, MIN_MARGIN } from "../bench/lib/baseline.js";
import { median, spread } from "../bench/lib/stats.js";

describe("bench baseline", () => {
  it("spread is the largest relative distance from the median", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([1, 2, 3, 4])).toBe(2.5);
    // median 10; 12 is 20% above it, 9 is 10% below.
    expect(spread([9, 10, 12])).toBeCloseTo(0.2);
  });

  it("margin is twice the spread, never below the minimum", () => {
    const { margin, spread: s } = marginsFrom([{ a: 10, b: 1 }, { a: 12, b: 1 }, { a: 9, b: 1.01 }]);
    expect(s.a).toBeCloseTo(0.2);
    expect(margin.a).toBe(0.4);
    expect(margin.b).toBe(MIN_MARGIN);
  });

  it("refuses a margin from fewer than three runs", () => {
    expect(() => marginsFrom([{ a: 1 }, { a: 1 }])).toThrow(/3 or more/);
  });

  it("passes within the margin, fails above it or when a ratio is missing", () => {
    const baseline = { ratios: { a: 10, b: 2 }, margin: { a: 0.2, b: 0.5 } };
    expect(compareToBaseline(baseline, { a: 11.9, b: 1 }).ok).toBe(true);
    expect(compareToBaseline(baseline, { a: 12.1, b: 1 }).ok).toBe(false);
    expect(compareToBaseline(baseline, { a: 1 }).ok).toBe(false);
    expect(compareToBaseline(baseline, { a: 12.1, b: 1 }).table).toContain("REGRESSED");
  });
});
