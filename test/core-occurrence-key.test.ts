// Occurrence keys (UPSTREAM-FORMAT.md §3.1): `<id>@<resultTimestamp>`; parse splits at the LAST
// `@` only when it is not at index 0 and the suffix is all digits; otherwise the whole string is a
// bare id. resultTimestampOf passes any JS number (NaN included) and nothing else.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  bareToolCallId,
  isOccurrenceKeyOf,
  occurrenceKey,
  parseOccurrenceKey,
  resultTimestampOf,
} from "../src/core/occurrence-key.js";

describe("isOccurrenceKeyOf", () => {
  it("says whether a key is occurrenceKey(id, timestamp), for any id, timestamp and near miss", () => {
    const id = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("a", "a@1", "@", "a@", "1", ""));
    const safe = fc.oneof(fc.maxSafeNat(), fc.constantFrom(0, 1786701610020, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER - 1, 10 ** 15));
    const ts = fc.option(fc.oneof(fc.integer(), safe, fc.double(), fc.constantFrom(-0, Number.NaN, 1, 12, 1e21, 0.1, 2 ** 53, 2 ** 53 + 2)), { nil: undefined });
    // Near misses of the digits: a leading zero, one digit more or less, one changed, past 2^53.
    const digitMisses = (t: number | undefined) => {
      const time = String(t);
      return [`0${time}`, `${time}0`, time.slice(0, -1), `${time.slice(0, -1)}${(Number(time.slice(-1)) + 1) % 10}`, `+${time}`, "9007199254740992", "9007199254740993", "19007199254740991", "00"];
    };
    const keyFor = (i: string, t: number | undefined) =>
      fc.oneof(
        fc.constant(occurrenceKey(i, t)),
        fc.string({ maxLength: 8 }),
        fc.constantFrom(`${i}@`, `${i}@1`, `${i}1`, `@${i}`, i, `${i}@${String(t)}x`, `x${i}@${String(t)}`, `${i}#${String(t)}`, `${i}@9${String(t)}`),
        fc.constantFrom(...digitMisses(t).map((digits) => `${i}@${digits}`)),
      );
    fc.assert(
      fc.property(id, ts, (i, t) => {
        fc.assert(fc.property(keyFor(i, t), (key) => isOccurrenceKeyOf(key, i, t) === (key === occurrenceKey(i, t))), { numRuns: 20 });
      }),
      { numRuns: 300 },
    );
  });
});

describe("occurrenceKey (join)", () => {
  it("joins id and timestamp with @ as a plain decimal integer", () => {
    expect(occurrenceKey("call_1", 1786701610020)).toBe("call_1@1786701610020");
  });

  it("writes any number as String() does (upstream's template literal): NaN, -0, Infinity, fractions, exponents", () => {
    fc.assert(fc.property(fc.string(), fc.oneof(fc.double(), fc.integer(), fc.constantFrom(-0, Number.NaN, Infinity, 1e21, 0.1)), (id, ts) => occurrenceKey(id, ts) === `${id}@${String(ts)}`));
  });

  it("gives the bare id when there is no timestamp (legacy shape)", () => {
    expect(occurrenceKey("call_1")).toBe("call_1");
    expect(occurrenceKey("call_1", undefined)).toBe("call_1");
  });

  it("keeps a timestamp of 0 (0 is a timestamp, not absence)", () => {
    expect(occurrenceKey("x", 0)).toBe("x@0");
  });
});

describe("parseOccurrenceKey", () => {
  it("splits a well-formed key into id and numeric timestamp", () => {
    expect(parseOccurrenceKey("call_1@1150")).toEqual({ toolCallId: "call_1", resultTimestamp: 1150 });
  });

  it("round-trips join → parse", () => {
    expect(parseOccurrenceKey(occurrenceKey("toolu_01ABC", 42))).toEqual({ toolCallId: "toolu_01ABC", resultTimestamp: 42 });
  });

  it("splits at the LAST @ so ids containing @ survive", () => {
    expect(parseOccurrenceKey("a@b@123")).toEqual({ toolCallId: "a@b", resultTimestamp: 123 });
  });

  it("an id containing @ and a digit suffix inside, then a real key suffix", () => {
    // "fn@7@99": last @ is before "99" → id "fn@7".
    expect(parseOccurrenceKey("fn@7@99")).toEqual({ toolCallId: "fn@7", resultTimestamp: 99 });
  });

  it("non-numeric suffix: `x@abc` is a bare id", () => {
    const parsed = parseOccurrenceKey("x@abc");
    expect(parsed).toEqual({ toolCallId: "x@abc" });
    expect("resultTimestamp" in parsed).toBe(false);
  });

  it("`@123` is a bare id because the @ is at index 0", () => {
    expect(parseOccurrenceKey("@123")).toEqual({ toolCallId: "@123" });
  });

  it("empty suffix (`x@`) is a bare id (^\\d+$ needs at least one digit)", () => {
    expect(parseOccurrenceKey("x@")).toEqual({ toolCallId: "x@" });
  });

  it("signed / decimal / spaced suffixes are not digits-only → bare id", () => {
    expect(parseOccurrenceKey("x@-1")).toEqual({ toolCallId: "x@-1" });
    expect(parseOccurrenceKey("x@1.5")).toEqual({ toolCallId: "x@1.5" });
    expect(parseOccurrenceKey("x@ 1")).toEqual({ toolCallId: "x@ 1" });
    expect(parseOccurrenceKey("x@1e3")).toEqual({ toolCallId: "x@1e3" });
  });

  it("a suffix that is digits only after the last @ wins even if an earlier @ has letters", () => {
    expect(parseOccurrenceKey("x@abc@5")).toEqual({ toolCallId: "x@abc", resultTimestamp: 5 });
  });

  it("no @ at all → bare id", () => {
    expect(parseOccurrenceKey("toolu_01")).toEqual({ toolCallId: "toolu_01" });
  });
});

describe("bareToolCallId", () => {
  it("strips a timestamp suffix", () => {
    expect(bareToolCallId("call_9@1000")).toBe("call_9");
  });
  it("returns a bare id unchanged, including ids with a non-numeric @ suffix", () => {
    expect(bareToolCallId("call_9")).toBe("call_9");
    expect(bareToolCallId("x@abc")).toBe("x@abc");
    expect(bareToolCallId("@123")).toBe("@123");
  });
});

describe("resultTimestampOf", () => {
  it("returns a number as is", () => {
    expect(resultTimestampOf(1150)).toBe(1150);
    expect(resultTimestampOf(0)).toBe(0);
  });

  it("passes NaN through (typeof NaN === 'number', upstream does the same)", () => {
    expect(Number.isNaN(resultTimestampOf(Number.NaN))).toBe(true);
  });

  it("returns undefined for numeric strings, null, undefined, objects", () => {
    expect(resultTimestampOf("1150")).toBeUndefined();
    expect(resultTimestampOf(null)).toBeUndefined();
    expect(resultTimestampOf(undefined)).toBeUndefined();
    expect(resultTimestampOf({})).toBeUndefined();
    expect(resultTimestampOf(1150n)).toBeUndefined();
  });
});
