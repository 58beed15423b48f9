// EntryIdSet (core/entry-id-set.ts) answers as a Set<string> of the same ids would, and knows the
// id added last: checked against a Set on random runs of 8-hex ids (pi's), near misses of them
// (upper case, 7 or 9 digits, "00000000") and any other strings, enough of them to grow the table.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EntryIdSet } from "../src/core/entry-id-set.js";

const hexId = fc.integer({ min: 0, max: 0xffffffff }).map((n) => n.toString(16).padStart(8, "0"));
const nearMiss = fc.oneof(
  hexId.map((id) => id.toUpperCase()),
  hexId.map((id) => id.slice(1)),
  hexId.map((id) => `${id}0`),
  fc.constantFrom("00000000", "0000000", "ffffffff", "fffffffg", "0000000/", "0000000:", "0000000`", "-1234567", " 1234567"),
  fc.string({ maxLength: 10 }),
);
/** A few values reused so that ids repeat (duplicates), as in a damaged file. */
const ids = fc.array(fc.oneof({ weight: 4, arbitrary: hexId }, { weight: 1, arbitrary: nearMiss }), { minLength: 1, maxLength: 40 }).chain((pool) =>
  fc.array(fc.constantFrom(...pool), { maxLength: 200 }),
);

describe("EntryIdSet", () => {
  it("has() and add() agree with a Set of the same ids, for ids added and not, and last is the id added last", () => {
    fc.assert(
      fc.property(ids, fc.array(fc.oneof(hexId, nearMiss), { maxLength: 30 }), (added, probes) => {
        const set = new EntryIdSet(added.length);
        const model = new Set<string>();
        for (const id of added) {
          expect(set.add(id)).toBe(model.has(id));
          model.add(id);
        }
        expect(set.last).toBe(added.length === 0 ? null : added[added.length - 1]);
        for (const id of [...added, ...probes]) expect(set.has(id)).toBe(model.has(id));
      }),
      { numRuns: 300 },
    );
  });

  it("tells apart ids whose digits are worth the same number: a leading zero, a case, one digit more", () => {
    const set = new EntryIdSet();
    for (const id of ["0abcdef0", "ABCDEF01", "100000000", "00000000"]) set.add(id);
    for (const id of ["abcdef0", "abcdef01", "0000000", "000000000", "0", "10000000"]) expect(set.has(id), id).toBe(false);
    for (const id of ["0abcdef0", "ABCDEF01", "100000000", "00000000"]) expect(set.has(id), id).toBe(true);
  });

  it("keeps every id through the table's growth (50k ids, a neighbouring id absent for each)", () => {
    const set = new EntryIdSet();
    const added: number[] = [];
    for (let i = 0; i < 50_000; i++) {
      const n = (Math.imul(i, 2654435761) & ~1) >>> 0;
      added.push(n);
      set.add(n.toString(16).padStart(8, "0"));
    }
    expect(added.every((n) => set.has(n.toString(16).padStart(8, "0")))).toBe(true);
    expect(added.some((n) => set.has((n + 1).toString(16).padStart(8, "0")))).toBe(false);
  });
});
