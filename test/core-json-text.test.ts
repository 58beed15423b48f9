// jsonText is JSON.stringify at any depth: the same text wherever JSON.stringify works (its
// iterative writer checked on its own against it over many shapes), and the exact text of values
// nested far deeper than JSON.stringify can go.

import { describe, expect, it } from "vitest";
import { iterativeJsonText, jsonText, nestsDeeperThan } from "../src/core/json-text.js";
import { resolvedValue, type LiteralRef } from "../src/core/literal-refs.js";
import { messageCarrier } from "../src/io/msgpack-codec.js";
import { deepJson } from "./helpers/deep-session.js";

/** A seeded generator (mulberry32). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRINGS = ["", "plain", 'quote " and \\ backslash', "line\nfeed\ttab\u0001", "lone \ud800 surrogate", "pair \ud83d\ude00", "__proto__", "\u2028"];

function value(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 4 ? 6 : 9));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2:
      return [0, -0, 1.5, -3e21, 1e-7, Number.NaN, Number.POSITIVE_INFINITY, 42][Math.floor(next() * 8)];
    case 3:
      return STRINGS[Math.floor(next() * STRINGS.length)];
    case 4:
      return undefined;
    case 5:
      return () => 1;
    case 6:
    case 7: {
      const items = Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
      return items;
    }
    default: {
      const out: Record<string, unknown> = {};
      for (let i = Math.floor(next() * 4); i > 0; i--) out[STRINGS[Math.floor(next() * STRINGS.length)]! + i] = value(next, depth + 1);
      if (next() < 0.1) Object.defineProperty(out, "toJSON", { value: (key: string) => ({ key }) });
      if (next() < 0.05) out.boxed = new String("boxed");
      return out;
    }
  }
}

describe("jsonText", () => {
  it("writes what JSON.stringify writes, over 2,000 fuzzed values (the iterative writer too)", () => {
    const next = random(45);
    for (let i = 0; i < 2000; i++) {
      const v = value(next, 0);
      expect(iterativeJsonText(v)).toBe(JSON.stringify(v));
      expect(jsonText(v)).toBe(JSON.stringify(v));
    }
  });

  it("writes values nested 100,000 deep exactly, where JSON.stringify runs out of stack", () => {
    for (const depth of [5_000, 100_000]) {
      const text = deepJson(depth);
      const parsed = JSON.parse(text) as unknown;
      expect(() => JSON.stringify(parsed)).toThrow(RangeError);
      expect(jsonText(parsed)).toBe(text);
    }
  });

  it("keeps JSON.stringify's errors: a cycle, even below a deep chain, a BigInt", () => {
    const deep: Record<string, unknown> = {};
    let node = deep;
    for (let level = 0; level < 5_000; level++) node = node.k = {};
    node.self = deep;
    expect(() => jsonText(deep)).toThrow(TypeError);
    expect(() => jsonText({ n: 1n })).toThrow(TypeError);
  });

  it("tells depth without recursion", () => {
    expect(nestsDeeperThan("x", 0)).toBe(false);
    expect(nestsDeeperThan([], 0)).toBe(true);
    expect(nestsDeeperThan({ a: [1] }, 2)).toBe(false);
    expect(nestsDeeperThan({ a: [1] }, 1)).toBe(true);
    const deep = JSON.parse(deepJson(100_000)) as unknown;
    expect(nestsDeeperThan(deep, 99_999)).toBe(true);
    expect(nestsDeeperThan(deep, 100_000)).toBe(false);
  });
});

describe("walks over parsed values at any depth", () => {
  it("resolvedValue copies a value nested 100,000 deep", () => {
    const text = deepJson(100_000);
    const ref = {} as LiteralRef;
    expect(jsonText(resolvedValue(JSON.parse(text), [ref]))).toBe(text);
  });

  it("messageCarrier sends a deep message as JSON, others as before", () => {
    expect(messageCarrier({ role: "user", content: [{ type: "text", text: "hi" }] })).toBe("msgpack");
    expect(messageCarrier({ role: "user", content: "lone \ud800" })).toBe("clone");
    expect(messageCarrier(JSON.parse('{"__proto__": 1}'))).toBe("clone");
    expect(messageCarrier({ role: "user", content: JSON.parse(deepJson(100_000)) })).toBe("json");
  });
});
