// U32Table (core/u32-table.ts) answers as a Map<number, number> of the same keys would: checked on
// random runs of 32-bit keys (0 and 2^32 - 1 included, keys set again), enough to grow the table.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { U32Table } from "../src/core/u32-table.js";

const key = fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), fc.constantFrom(0, 1, 0x7fffffff, 0x80000000, 0xffffffff));
const keys = fc.array(key, { minLength: 1, maxLength: 30 }).chain((pool) => fc.array(fc.tuple(fc.constantFrom(...pool), fc.integer({ min: -1, max: 1 << 30 })), { maxLength: 3000 }));

describe("U32Table", () => {
  it("with values, get() agrees with a Map after the same sets, for keys set and not; valuesOf() gives every value once", () => {
    fc.assert(
      fc.property(keys, fc.array(key, { maxLength: 30 }), (sets, probes) => {
        const table = new U32Table(true);
        const model = new Map<number, number>();
        for (const [k, v] of sets) {
          expect(table.set(k, v)).toBe(model.has(k));
          model.set(k, v);
        }
        for (const k of [...sets.map(([k]) => k), ...probes]) expect(table.get(k)).toBe(model.get(k));
        expect([...table.valuesOf()].sort()).toEqual([...model.values()].sort());
      }),
      { numRuns: 200 },
    );
  });

  it.each([0, 50_000, 100])("keeps every key and value through growth (50k keys; room made for %i), and as a set answers 0 for a key it holds", (expectedKeys) => {
    const table = new U32Table(true, expectedKeys);
    const set = new U32Table(false, expectedKeys);
    const added: number[] = [];
    for (let i = 0; i < 50_000; i++) {
      const n = (Math.imul(i, 2654435761) & ~1) >>> 0;
      added.push(n);
      table.set(n, i);
      set.set(n);
    }
    expect(added.every((n, i) => table.get(n) === i && set.get(n) === 0)).toBe(true);
    expect(added.some((n) => table.get(n + 1) !== undefined || set.get(n + 1) !== undefined)).toBe(false);
  });
});
