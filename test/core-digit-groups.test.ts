// digitGroups writes counts exactly as toLocaleString("en-US") does.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { digitGroups } from "../src/core/digit-groups.js";

describe("digitGroups", () => {
  it("groups the digits of an integer by thousands, as en-US does", () => {
    for (const n of [0, 1, 12, 123, 999, 1000, 1234, 12345, 123456, 1234567, 1000000, -1, -999, -1000, -1234567, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]) {
      expect(digitGroups(n)).toBe(n.toLocaleString("en-US"));
    }
    fc.assert(fc.property(fc.maxSafeInteger(), (n) => digitGroups(n) === n.toLocaleString("en-US")), { numRuns: 2000 });
  });

  it("leaves other numbers to toLocaleString", () => {
    for (const n of [1234.5678, -0.5, -0, 2 ** 60, Number.NaN, Number.POSITIVE_INFINITY]) expect(digitGroups(n)).toBe(n.toLocaleString("en-US"));
  });
});
