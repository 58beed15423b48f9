// Lines parsed with refs (core/literal-refs.ts) stand for exactly what JSON.parse gives: resolved,
// they are the parsed value; lightened, they are the lightened parsed value with the same measure;
// serialised and expanded, they are the bytes JSON.stringify writes of the parsed value. Fuzzed
// over entries with long strings anywhere, odd spellings, and broken lines.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lightenInPlace } from "../src/core/light-value.js";
import { expandMarkers, holdsMarker, markerFor, parseWithRefs, REF_LINE_MIN_BYTES, REF_MIN_BYTES, REF_OTHER_LINE_MIN_BYTES, refOf, resolvedJsonLength, resolvedValue, resolveMarkers, type LiteralRef } from "../src/core/literal-refs.js";
import { classifyLine, classifyLineWithRefs } from "../src/io/session-line.js";
import { utf8Join } from "../src/core/utf8-join.js";

/** Text rich in what JSON escapes and in multi-byte characters. */
const hardText = fc
  .array(
    fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 6 }),
      fc.constantFrom('"', "\\", "/", "\n", "\r\n", "\t", "\u0000", "\u001f", "\u007f", "\u2028", "😀", "é", "読", "\uE000", "\uE001", "\uE002", "\uE003", "\uE0020\uE003", " ", "   "),
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(""));
/** Short strings, and long ones well past REF_MIN_BYTES. */
const text = fc.oneof(hardText, fc.tuple(hardText, fc.integer({ min: 1, max: 60 })).map(([t, n]) => `${t}x`.repeat(n)), fc.constantFrom(" ".repeat(300), `${" ".repeat(400)}tail`));
const KEYS = ["type", "id", "parentId", "role", "toolCallId", "toolName", "name", "text", "content", "arguments", "path", "command", "usage", "details", "thinking", "data"];
const value = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    text,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("node"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...KEYS), hardText), tie("node"), { maxKeys: 5 }),
  ),
})).node;
/** An entry-shaped object (a line is an object), possibly a message with tool-call arguments. */
const entry = fc.oneof(
  fc.dictionary(fc.oneof(fc.constantFrom(...KEYS), hardText), value, { minKeys: 1, maxKeys: 6 }),
  fc.record({
    type: fc.constant("message"),
    id: text,
    message: fc.record({ role: fc.constantFrom("assistant", "toolResult"), content: fc.array(fc.record({ type: fc.constantFrom("text", "toolCall"), text, arguments: value }), { maxLength: 3 }), usage: value }),
  }),
);

/** The line JSON.stringify writes, or the same value spelled oddly: some characters of strings as \u escapes (either case), "/" as "\/". */
function spelled(v: unknown, odd: boolean): Buffer {
  const json = JSON.stringify(v);
  if (!odd) return Buffer.from(json);
  let out = "";
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i]!;
    if (c === '"') {
      inString = !inString;
      out += c;
    } else if (inString && c === "\\") {
      // An escape is copied whole: \uXXXX, or a backslash and one character.
      const length = json[i + 1] === "u" ? 6 : 2;
      out += json.slice(i, i + length);
      i += length - 1;
    } else if (inString && c === "/" && i % 2 === 0) {
      out += "\\/";
    } else if (inString && i % 7 === 3) {
      const hex = c.charCodeAt(0).toString(16).padStart(4, "0");
      out += `\\u${i % 2 ? hex.toUpperCase() : hex}`;
    } else {
      out += c;
    }
  }
  return Buffer.from(out);
}

/** A string value of at least REF_MIN_BYTES bytes that is not a key nor the value of a name key, somewhere in the line. */
function hasLongValue(v: unknown, key?: string): boolean {
  if (typeof v === "string") return Buffer.byteLength(JSON.stringify(v)) >= REF_MIN_BYTES && !["type", "id", "parentId", "role", "toolCallId", "toolName", "name", "customType", "stopReason", "timestamp"].includes(key ?? "");
  if (Array.isArray(v)) return v.some((item) => hasLongValue(item));
  if (typeof v === "object" && v !== null) return Object.entries(v).some(([k, item]) => hasLongValue(item, k));
  return false;
}

/** The line (canonical or oddly spelled), JSON.parse's value of it, and parseWithRefs' (undefined when it refused). */
function bothParses(v: unknown, odd: boolean): { line: Buffer; expected: unknown; refs: LiteralRef[]; parsed: { value: unknown } | undefined } {
  const line = spelled(v, odd);
  const refs: LiteralRef[] = [];
  const parsed = parseWithRefs(line, refs);
  return { line, expected: JSON.parse(line.toString("utf8")) as unknown, refs, parsed };
}

/** Lightened as the shard scan lightens an entry: the message first, then the whole. */
function lightened(v: unknown, refs?: LiteralRef[]): { value: unknown; chars: number | undefined } {
  const message = typeof v === "object" && v !== null && (v as { type?: unknown }).type === "message" ? (v as { message?: unknown }).message : undefined;
  const chars = typeof message === "object" && message !== null ? lightenInPlace(message, refs) : undefined;
  lightenInPlace(v, refs);
  return { value: v, chars };
}

describe("classifyLineWithRefs", () => {
  it("looks into a line for refs from the size it is given on, and gives what classifyLine gives below it", () => {
    // An assistant line between the two sizes: a tool result's would be looked into, any other not.
    const text = "x".repeat(REF_LINE_MIN_BYTES);
    const line = Buffer.from(JSON.stringify({ type: "message", id: "a1", message: { role: "assistant", content: [{ type: "text", text }] } }));
    expect(line.length).toBeGreaterThanOrEqual(REF_LINE_MIN_BYTES);
    expect(line.length).toBeLessThan(REF_OTHER_LINE_MIN_BYTES);

    const full: LiteralRef[] = [];
    expect(classifyLineWithRefs(line, false, full, REF_OTHER_LINE_MIN_BYTES)).toEqual(classifyLine(line, false));
    expect(full).toEqual([]);

    const refs: LiteralRef[] = [];
    const withRefs = classifyLineWithRefs(line, false, refs);
    expect(refs).toHaveLength(1);
    expect(withRefs.kind === "value" && resolvedValue(withRefs.value, refs)).toEqual(JSON.parse(line.toString("utf8")));
  });
});

describe("parseWithRefs", () => {
  it("resolves to what JSON.parse gives, never makes a ref of a key or a name, and applies to every line with a long value", () => {
    fc.assert(
      fc.property(entry, fc.boolean(), (v, odd) => {
        const { line, expected, refs, parsed } = bothParses(v, odd);
        if (parsed === undefined) {
          expect(refs).toEqual([]);
          // Refused only for a short line, for want of a long value, or for a U+E002 that could pass for a marker.
          if (line.length >= REF_LINE_MIN_BYTES && !/\uE002|\\u[eE]002/.test(line.toString("utf8"))) expect(hasLongValue(expected)).toBe(false);
          return;
        }
        expect(refs.length).toBeGreaterThan(0);
        expect(resolvedValue(parsed.value, refs)).toEqual(expected);
        expect(JSON.stringify(parsed.value)).not.toMatch(/"(type|id|parentId|role|toolCallId|toolName|name)":"\uE002/);
        for (const ref of refs) expect(ref.bytes[ref.start]).toBe(0x22);
      }),
      { numRuns: 1500 },
    );
  });

  it("lightens to the same entry with the same measure as the parsed line", () => {
    fc.assert(
      fc.property(entry, fc.boolean(), (v, odd) => {
        const { expected, refs, parsed } = bothParses(v, odd);
        if (parsed === undefined) return;
        const full = lightened(expected);
        const light = lightened(parsed.value, refs);
        expect(light.value).toEqual(full.value);
        expect(light.chars).toBe(full.chars);
      }),
      { numRuns: 1500 },
    );
  });

  it("serialised with its markers and expanded, gives the bytes JSON.stringify writes of the parsed line, markers inside joined strings too", () => {
    fc.assert(
      fc.property(entry, fc.boolean(), (v, odd) => {
        const { expected, refs, parsed } = bothParses(v, odd);
        if (parsed === undefined) return;
        // Text parts joined the way contentText joins them, around markers.
        const joined = refs.map((_, i) => `\uE002${i}\uE003`).join("\n");
        const json = JSON.stringify({ value: parsed.value, joined });
        const expectedJson = JSON.stringify({ value: expected, joined: resolveMarkers(joined, refs) });
        expect(utf8Join(expandMarkers(json, refs)).toString("utf8")).toBe(expectedJson);
        expect(resolvedJsonLength(json, refs)).toBe(expectedJson.length);
      }),
      { numRuns: 1500 },
    );
  });

  it("leaves lines it cannot take to the full parse: broken literals and JSON, U+E002 in any spelling, no long value", () => {
    // Long enough for the line to be looked at (a line that short is parsed as usual, see the last case).
    const long = "x".repeat(REF_LINE_MIN_BYTES);
    const refuse = (line: string) => {
      const refs: LiteralRef[] = [];
      expect(parseWithRefs(Buffer.from(line), refs)).toBeUndefined();
      expect(refs).toEqual([]);
    };
    refuse(`{"text":"${long}\u0001"}`); // a raw control inside the literal
    refuse(`{"text":"${long}\\x"}`); // an invalid escape
    refuse(`{"text":"${long}\\u12G4"}`);
    refuse(`{"text":"${long}"`); // the object never closes
    refuse(`{"text":"${long}" "more":1}`); // JSON broken outside the literal
    // U+E002 outside the refs, raw or escaped, before or after them: a real string could pass for a marker.
    refuse(`{"a":"${long}","b":"\uE002x"}`);
    refuse(`{"b":"\uE0020\uE003","a":"${long}"}`);
    refuse(`{"a":"${long}","b":"\\ue002"}`);
    refuse(`{"a":"${long}","b":"\\uE0020\\uE003"}`);
    refuse(`{"id":"${long}","type":"${long}"}`); // only names
    refuse(`["${long}"]`); // not an object
    refuse(` {"text":"${long}"}`);
    refuse(`{"text":"short"}`);
    refuse(`{"text":"${"x".repeat(REF_MIN_BYTES)}"}`); // a long value, in a line too short to look at
    // Inside a ref it is just text: the ref is never parsed as JSON, nor searched for markers.
    for (const inside of [`${long}\uE0020\uE003`, `${long}\\uE0020\\uE003`]) {
      const refs: LiteralRef[] = [];
      const line = Buffer.from(`{"text":"${inside}"}`);
      const parsed = parseWithRefs(line, refs);
      expect(resolvedValue(parsed!.value, refs)).toEqual(JSON.parse(line.toString()));
      expect(utf8Join(expandMarkers(JSON.stringify(parsed!.value), refs)).toString()).toBe(JSON.stringify(JSON.parse(line.toString())));
    }
    // And a line it takes, for contrast.
    const refs: LiteralRef[] = [];
    const parsed = parseWithRefs(Buffer.from(`{"text":"${long}","id":"${long}"}`), refs);
    expect(refs).toHaveLength(1);
    expect(refOf((parsed!.value as { text: string }).text, refs)).toBe(refs[0]);
    expect((parsed!.value as { id: string }).id).toBe(long);
    expect(holdsMarker((parsed!.value as { text: string }).text)).toBe(true);
  });
});

describe("resolvedValue", () => {
  it("keeps a parsed `__proto__` key as a key of its own, in its place, where the line has refs", () => {
    const long = "x".repeat(REF_LINE_MIN_BYTES);
    const line = `{"text":"${long}","arguments":{"__proto__":{"polluted":true},"constructor":"x","command":"odd"}}`;
    const refs: LiteralRef[] = [];
    const parsed = parseWithRefs(Buffer.from(line), refs);
    expect(refs).toHaveLength(1);
    const resolved = resolvedValue(parsed!.value, refs) as { arguments: object };
    expect(JSON.stringify(resolved)).toBe(JSON.stringify(JSON.parse(line)));
    expect(Object.getPrototypeOf(resolved.arguments)).toBe(Object.prototype);
  });
});

describe("refOf", () => {
  it("names a ref only for a whole marker of an index it has; any other string, empty or marker-like, names none", () => {
    const refs: LiteralRef[] = [];
    const long = "x".repeat(REF_MIN_BYTES * 2);
    parseWithRefs(Buffer.from(`{"text":"${long}","more":"${long}"}`), refs);
    expect(refs).toHaveLength(2);
    expect(refOf(markerFor(0), refs)).toBe(refs[0]);
    expect(refOf(markerFor(1), refs)).toBe(refs[1]);
    for (const other of ["", "\uE002", "\uE002\uE003", markerFor(2), "\uE002-1\uE003", "\uE0021.5\uE003", `a${markerFor(0)}`, `${markerFor(0)}a`]) {
      expect(refOf(other, refs), JSON.stringify(other)).toBeUndefined();
    }
  });
});
