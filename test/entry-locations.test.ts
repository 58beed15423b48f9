import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { EntryLocations } from "../src/io/entry-locations.js";
import type { EntryLocation } from "../src/io/loaded-session.js";
import type { OutputLiteral } from "../src/io/output-literal.js";

const digest = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((n) => n.toString(16).padStart(16, "0"));
const output: fc.Arbitrary<OutputLiteral> = fc.tuple(fc.nat(), fc.nat(), fc.nat(), fc.nat(), fc.nat(), fc.integer({ min: 0, max: 3 }), digest);
const location: fc.Arbitrary<EntryLocation> = fc.record(
  {
    line: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    byteOffset: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    bytes: fc.nat(),
    terminated: fc.boolean(),
    messageChars: fc.nat(),
    output,
  },
  { requiredKeys: ["line", "byteOffset", "bytes", "terminated"] },
);

describe("EntryLocations", () => {
  it("gives back every location as it was pushed, across growth of its columns", () => {
    fc.assert(
      fc.property(fc.array(location, { maxLength: 3000 }), (locations) => {
        const columns = new EntryLocations();
        const indices = locations.map((p) => columns.push(p, p.messageChars, p.output));
        expect(indices).toEqual(locations.map((_, i) => i));
        expect(locations.map((_, i) => columns.at(i))).toEqual(locations);
        expect(locations.map((_, i) => columns.line(i))).toEqual(locations.map((p) => p.line));
        expect(locations.map((_, i) => columns.messageCharsAt(i))).toEqual(locations.map((p) => p.messageChars));
      }),
      { numRuns: 30 },
    );
  });

  it("gives back every location across many blocks of its columns (16,384 locations a block)", () => {
    const columns = new EntryLocations();
    const count = 3 * 16_384 + 7;
    const placeOf = (i: number): EntryLocation => {
      const location: EntryLocation = { line: i + 1, byteOffset: i * 1_000_003, bytes: (i * 7) % 5_000, terminated: i % 3 !== 0 };
      if (i % 2 === 0) location.messageChars = i * 11;
      if (i % 5 === 0) location.output = [i, i + 1, i + 2, i + 3, i + 4, i % 4, (i * 2_654_435_761).toString(16).padStart(16, "0").slice(-16)];
      return location;
    };
    for (let i = 0; i < count; i++) expect(columns.push(placeOf(i), placeOf(i).messageChars, placeOf(i).output)).toBe(i);
    for (let i = 0; i < count; i++) expect(columns.at(i)).toEqual(placeOf(i));
  });

  it("keeps a digest's leading zeros", () => {
    const columns = new EntryLocations();
    columns.push({ line: 2, byteOffset: 10, bytes: 5, terminated: true }, undefined, [1, 2, 3, 4, 5, 1, "00000000000000a0"]);
    expect(columns.at(0).output?.[6]).toBe("00000000000000a0");
  });

  it("refuses a digest that is not 16 hex digits instead of storing another one", () => {
    const columns = new EntryLocations();
    expect(() => columns.push({ line: 2, byteOffset: 0, bytes: 1, terminated: true }, undefined, [0, 0, 0, 0, 0, 0, "xyz"])).toThrow(/16 hex digits/);
  });
});
