// PairLog (core/pair-log.ts) gives back every pair in the order it was added, across its chunks
// (the first holds 32 pairs, each next one twice as many, up to 4096).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PairLog } from "../src/core/pair-log.js";

function replay(log: PairLog): string[] {
  const items: string[] = [];
  log.forEach((a, b) => items.push(a, b));
  return items;
}

describe("PairLog", () => {
  it("replays the pairs in order, for counts around every chunk boundary", () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 0, max: 200 }), fc.constantFrom(31, 32, 33, 95, 96, 97, 4095, 4096, 4097, 12_000, 20_000)), (pairs) => {
        const log = new PairLog();
        const expected: string[] = [];
        for (let i = 0; i < pairs; i++) {
          log.add(`a${i}`, `b${i}`);
          expected.push(`a${i}`, `b${i}`);
        }
        expect(replay(log)).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });
});
