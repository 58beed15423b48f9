// Lightened entries (core/light-value.ts): what planning reads survives, and a context measured on
// lightened values equals the one measured on the real values.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { argsExcerpt } from "../src/core/deterministic-body.js";
import { isSyntheticChainMessage } from "../src/core/message-text.js";
import { jsonStringLength, realJsonLength } from "../src/core/light-placeholder.js";
import { guardLightened, LIGHT_ARGS_KEEP_CHARS, LIGHT_KEEP_CHARS, LIGHT_PATH_MAX, lightenInPlace, lightString } from "../src/core/light-value.js";

/** Strings rich in what JSON escapes: quotes, backslashes, controls, surrogates (paired and lone). */
const jsonHard = fc.array(
  fc.oneof(
    fc.string({ unit: "grapheme", maxLength: 8 }),
    fc.constantFrom('"', "\\", "\n", "\t", "\u0000", "\u001f", "\u2028", "\ud83d", "\ude00", "😀", "é", "\uE000", "\uE001", "\u0091", "\u0092", "\u0091\u0092"),
  ),
  { maxLength: 400 },
).map((parts) => parts.join(""));

describe("jsonStringLength", () => {
  it("equals JSON.stringify(text).length for any text", () => {
    fc.assert(fc.property(jsonHard, (text) => jsonStringLength(text) === JSON.stringify(text).length), { numRuns: 2000 });
  });
});

describe("lightString", () => {
  it("keeps short texts whole and cuts long ones to a head and a placeholder worth the rest", () => {
    fc.assert(
      fc.property(jsonHard, fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 40 }), (text, lead, repeat) => {
        const long = `${" ".repeat(lead)}${text.repeat(repeat)}`;
        const light = lightString(long, 64);
        if (long.length <= 64) expect(light).toBe(long);
        expect(light.length).toBeLessThanOrEqual(Math.max(long.length, lead + 256 + 18));
        expect(realJsonLength(light)).toBe(JSON.stringify(long).length);
        // The head is intact, leading whitespace included.
        expect(long.startsWith(light.slice(0, Math.min(light.length, lead + LIGHT_KEEP_CHARS)))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe("lightenInPlace", () => {
  const bigOutput = "line of output\n".repeat(5000);
  const bigArg = "x".repeat(LIGHT_PATH_MAX + 1);
  const entry = () => ({
    type: "message",
    id: "a1",
    parentId: null,
    timestamp: "2026-01-01T00:00:00.000Z",
    message: { role: "toolResult", toolCallId: "call_1", toolName: "read", content: [{ type: "text", text: bigOutput }], isError: false, timestamp: 5 },
  });

  it("measures a message exactly and keeps ids, names, timestamps and shape", () => {
    const real = entry();
    const light = entry();
    lightenInPlace(light);
    expect(realJsonLength(light.message)).toBe(JSON.stringify(real.message).length);
    expect(light.message.content[0]!.text.length).toBeLessThan(LIGHT_KEEP_CHARS + 30);
    expect({ ...light.message, content: undefined }).toEqual({ ...real.message, content: undefined });
  });

  it("leaves `path` arguments up to PATH_MAX whole and keeps the 200-character args excerpt", () => {
    const path = `/home/u/${"p/".repeat(1500)}skills/x/SKILL.md`;
    const call = { type: "message", id: "b", parentId: null, timestamp: "t", message: { role: "assistant", content: [{ type: "toolCall", id: "c", name: "write", arguments: { path, content: bigArg } }], timestamp: 1 } };
    const excerptBefore = JSON.stringify(call.message.content[0]!.arguments).slice(0, 200);
    lightenInPlace(call);
    const args = call.message.content[0]!.arguments;
    expect(args.path).toBe(path);
    expect(args.content.length).toBeLessThan(bigArg.length);
    expect(JSON.stringify(args).slice(0, 200)).toBe(excerptBefore);
  });

  it("keeps the excerpt of any call's arguments exact, and no head of a string that starts past the kept part (an edit's newText)", () => {
    const longish = fc.oneof(jsonHard, jsonHard.map((t) => t.repeat(30)), fc.integer({ min: 0, max: 600 }).map((n) => "y".repeat(n)));
    const argValue = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: "small" }, longish, longish, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.array(tie("node"), { maxLength: 4 }), fc.dictionary(fc.oneof(jsonHard, fc.constantFrom("path", "text", "content", "oldText", "newText")), tie("node"), { maxKeys: 4 })),
    })).node;
    // Short members first move the long ones along, to anywhere around the kept part's end.
    const padding = fc.integer({ min: 0, max: 90 }).chain((n) => fc.array(fc.tuple(fc.string({ maxLength: 3 }), fc.integer({ min: 0, max: 9 })), { minLength: n, maxLength: n }));
    const members = fc.dictionary(fc.oneof(jsonHard, fc.constantFrom("path", "command", "oldText", "newText", "content")), argValue, { maxKeys: 6 });
    const object = fc.tuple(padding, members).map(([pad, rest]) => Object.assign(Object.fromEntries(pad.map(([k, v]) => [`_${k}`, v])), rest));
    const array = fc.tuple(padding, fc.array(argValue, { maxLength: 4 })).map(([pad, rest]) => [...pad.map(([, v]) => v), ...rest]);
    const args = fc.oneof(object, array, longish);
    fc.assert(
      fc.property(args, fc.constantFrom("arguments", "input", "args"), (a, key) => {
        const real = JSON.parse(JSON.stringify({ role: "assistant", content: [{ type: "toolCall", id: "c", name: "t", [key]: a }] })) as { content: Array<Record<string, unknown>> };
        const light = structuredClone(real);
        const length = lightenInPlace(light);
        expect(length).toBe(JSON.stringify(real).length);
        expect(realJsonLength(light)).toBe(length);
        expect(argsExcerpt(light.content[0]![key])).toBe(argsExcerpt(real.content[0]![key]));
      }),
      { numRuns: 1500 },
    );
    const oldText = "o".repeat(600);
    const newText = "n".repeat(600);
    const call = { role: "assistant", content: [{ type: "toolCall", id: "c", name: "edit", arguments: { path: "/src/a.ts", oldText, newText } }] };
    lightenInPlace(call);
    const lightArgs = call.content[0]!.arguments;
    // oldText's opening quote is at 30 in `{"path":"/src/a.ts","oldText":"…`: it keeps 256 - 30.
    expect(lightArgs.oldText.startsWith("o".repeat(LIGHT_ARGS_KEEP_CHARS - 30))).toBe(true);
    expect(lightArgs.oldText.startsWith("o".repeat(LIGHT_ARGS_KEEP_CHARS - 29))).toBe(false);
    expect(lightArgs.newText.startsWith("n")).toBe(false);
  });

  it("with a key to skip, leaves that key's value alone and counts the rest (the scan lightens a message first, then its entry)", () => {
    const real = entry();
    const light = entry();
    const messageChars = lightenInPlace(light.message);
    const lightMessage = structuredClone(light.message);
    const rest = lightenInPlace(light, undefined, "message");
    // Lightening again would not change what was lightened; skipping it saves the walk.
    expect(light.message).toEqual(lightMessage);
    expect(messageChars).toBe(JSON.stringify(real.message).length);
    const withoutMessage = { ...real, message: undefined };
    expect(rest).toBe(JSON.stringify(withoutMessage).length);
  });

  it("keeps a head only in a user message's texts: an assistant's text and thinking and a tool result keep none", () => {
    const text = `\n  ${"The answer is in the second file. ".repeat(40)}`;
    const user = { role: "user", content: [{ type: "text", text }], timestamp: 1 };
    const assistant = { role: "assistant", content: [{ type: "thinking", thinking: text }, { type: "text", text }], timestamp: 2 };
    const result = { role: "toolResult", toolCallId: "c", toolName: "read", content: [{ type: "text", text }], isError: false, timestamp: 3 };
    const real = structuredClone([user, assistant, result]);
    for (const message of [user, assistant, result]) lightenInPlace(message);
    expect(user.content[0]!.text.startsWith(text.slice(0, 3 + LIGHT_KEEP_CHARS))).toBe(true);
    for (const light of [assistant.content[0]!.thinking, assistant.content[1]!.text, result.content[0]!.text]) {
      expect(light).toMatch(/^\u0091\d+\u0092$/);
    }
    // The measure is the same whatever was kept.
    [user, assistant, result].forEach((message, i) => expect(realJsonLength(message)).toBe(JSON.stringify(real[i]).length));
  });

  it("a long synthetic user message is still recognised after lightening", () => {
    const user = { type: "message", id: "u", parentId: null, timestamp: "t", message: { role: "user", content: [{ type: "text", text: `\n\n  <compressed-chain id="b1">${"y".repeat(10_000)}` }], timestamp: 1 } };
    lightenInPlace(user);
    expect(isSyntheticChainMessage(user.message as never)).toBe(true);
  });
});

describe("lightenInPlace's measure", () => {
  it("returns JSON.stringify(value).length of the value as it was, for any parsed JSON", () => {
    const longish = fc.oneof(jsonHard, jsonHard.map((t) => t.repeat(20)));
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: "small" }, longish, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie("node"), { maxLength: 5 }), fc.dictionary(fc.oneof(jsonHard, fc.constantFrom("text", "content", "arguments", "path", "id", "usage")), tie("node"), { maxKeys: 5 })),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        const parsed = JSON.parse(JSON.stringify(v)) as unknown;
        const expected = JSON.stringify(parsed).length;
        expect(lightenInPlace(parsed)).toBe(expected);
        expect(realJsonLength(parsed)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
});

describe("what is never lightened", () => {
  it("identifiers, names, timestamps and a session header stay exact whatever their length (found by the fuzz: a 360-character session id)", () => {
    const long = (c: string) => c.repeat(500);
    const header = { type: "session", version: 3, id: long("x"), timestamp: "t", cwd: long("/") };
    const entry = {
      type: "message",
      id: long("i"),
      parentId: long("p"),
      timestamp: "2026-01-01T00:00:00.000Z",
      message: { role: "toolResult", toolCallId: long("c"), toolName: long("n"), content: [{ type: "text", text: long("o") }], isError: false, timestamp: 1 },
    };
    const chain = { type: "custom", customType: "context-prune-chain", id: "e", parentId: null, timestamp: "t", data: { blockId: "b1", droppedToolCallIds: [long("d")], toolRefs: ["t1"], rangeSummaryText: long("s") } };
    const [h, e, c] = [structuredClone(header), structuredClone(entry), structuredClone(chain)];
    for (const value of [h, e, c]) lightenInPlace(value);
    expect(h).toEqual(header);
    expect({ ...e, message: { ...e.message, content: undefined } }).toEqual({ ...entry, message: { ...entry.message, content: undefined } });
    expect(e.message.content[0]!.text.length).toBeLessThan(100);
    expect(c.data.droppedToolCallIds).toEqual(chain.data.droppedToolCallIds);
    expect(c.data.rangeSummaryText.length).toBeLessThan(100);
  });
});

describe("guardLightened", () => {
  it("makes serialising lightened data throw instead of writing placeholders", () => {
    const data = guardLightened({ toolCalls: [{ resultText: lightString("z".repeat(9000), 10) }] });
    expect(() => JSON.stringify(data)).toThrow(/must not be serialised/);
    expect(Object.keys(data)).toEqual(["toolCalls"]);
  });
});

describe("usage subtrees", () => {
  it("a tool result's details become one placeholder; a custom message's details (a per-batch summary's refs) stay", () => {
    const details = { diff: "-a\n+b\n".repeat(20), firstChangedLine: 3 };
    const result = { role: "toolResult", toolCallId: "c1", toolName: "edit", content: [{ type: "text", text: "ok" }], details: structuredClone(details), isError: false, timestamp: 1 };
    const summary = { role: "custom", customType: "context-prune-summary", content: "s", details: { toolCallRefs: [{ shortId: "t1", toolCallId: "c1" }], note: "n".repeat(80) }, timestamp: 2 };
    const realResult = JSON.stringify(result).length;
    const realSummary = structuredClone(summary);
    expect(lightenInPlace(result)).toBe(realResult);
    expect(typeof result.details).toBe("string");
    expect(realJsonLength(result)).toBe(realResult);
    lightenInPlace(summary);
    expect(summary.details.toolCallRefs).toEqual(realSummary.details.toolCallRefs);
  });

  it("an assistant's usage becomes one placeholder, a usage object inside a call's arguments stays (a retry body quotes the args)", () => {
    const usage = { input: 123456, output: 654321, cacheRead: 42, cost: { total: 0.5 } };
    const message = { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "x", usage: { ...usage } } }], usage: { ...usage } };
    const realArgsJson = JSON.stringify(message.content[0]!.arguments);
    const length = lightenInPlace(message);
    expect(typeof message.usage).toBe("string");
    expect(JSON.stringify(message.content[0]!.arguments)).toBe(realArgsJson);
    expect(realJsonLength(message)).toBe(length);
  });
});

