// The spillPath literals of an index line, found on its bytes (core/spill-path-spans.ts), and the
// line rewritten for a copy in another folder (core/relocate-spill-paths.ts): only records'
// spillPath values change, whatever else in the line looks like one.
import { describe, expect, it } from "vitest";
import { relocateIndexLine } from "../src/core/relocate-spill-paths.js";
import { spillPathSpans } from "../src/core/spill-path-spans.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

function record(fields: Record<string, unknown>): Record<string, unknown> {
  return { toolCallId: "c1", toolName: "bash", args: {}, resultText: "", isError: false, turnIndex: -1, timestamp: 1, ...fields };
}

function indexLine(toolCalls: unknown[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type: "custom", customType: "context-prune-index", data: { toolCalls, backfilled: true }, id: "e1", parentId: null, timestamp: "t", ...extra });
}

describe("spillPathSpans", () => {
  it("finds each record's spillPath by its index, and nothing named spillPath elsewhere", () => {
    const line = indexLine(
      [
        record({ args: { spillPath: "/args/x" }, resultPreview: '"spillPath":"/in/text"' }),
        record({ toolCallId: "c2", spillPath: "/old/blobs/a.txt", details: [{ spillPath: "/deeper" }] }),
        7,
        record({ toolCallId: "c4", spillPath: "/old/blobs/b \\\"q\\\".txt" }),
      ],
      { spillPath: "/top" },
    );
    const data = bytes(line);
    const spans = spillPathSpans(data);
    expect(spans.map((s) => [s.record, JSON.parse(text(data.subarray(s.start, s.end)))])).toEqual([
      [1, "/old/blobs/a.txt"],
      [3, '/old/blobs/b \\"q\\".txt'],
    ]);
  });

  it("nests 100,000 deep without recursion", () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const line = `{"type":"custom","customType":"context-prune-index","data":{"toolCalls":[{"toolCallId":"c","toolName":"t","args":${deep},"spillPath":"/p/a.txt"}]}}`;
    expect(spillPathSpans(bytes(line)).map((s) => s.record)).toEqual([0]);
  });
});

describe("relocateIndexLine", () => {
  it("rewrites only the spillPath literals; every other byte stays", () => {
    const line = indexLine([record({ spillPath: "/old/blobs/a.txt", resultPreview: "é\u2028" }), record({ toolCallId: "c2", resultText: "inline" })]);
    const relocated = relocateIndexLine(bytes(line), "/new/blobs");
    expect(relocated?.ok).toBe(true);
    if (!relocated?.ok) return;
    expect(text(relocated.bytes)).toBe(line.replace('"spillPath":"/old/blobs/a.txt"', '"spillPath":"/new/blobs/a.txt"'));
    expect(relocated.spills.map((s) => [s.toolCallId, s.fileName])).toEqual([["c1", "a.txt"]]);
  });

  it("a duplicate key JSON.parse drops is left as it is; the kept one is rewritten", () => {
    const line = `{"type":"custom","customType":"context-prune-index","data":{"toolCalls":[{"toolCallId":"c","toolName":"t","spillPath":"/x/dropped.txt","spillPath":"/x/kept.txt"}]},"id":"e"}`;
    const relocated = relocateIndexLine(bytes(line), "/n");
    expect(relocated?.ok && text(relocated.bytes)).toBe(line.replace('"/x/kept.txt"', '"/n/kept.txt"'));
  });

  it("a record readers skip keeps its bytes; a path with no plain file name fails, naming the record", () => {
    const skipped = indexLine([record({ toolName: 5, spillPath: "/x/a.txt" })]);
    const kept = relocateIndexLine(bytes(skipped), "/n");
    expect(kept?.ok && text(kept.bytes)).toBe(skipped);
    const climbing = relocateIndexLine(bytes(indexLine([record({ spillPath: "/x/.." })])), "/n");
    expect(climbing).toMatchObject({ ok: false, spill: { entryId: "e1", toolCallId: "c1" } });
  });

  it("other lines are not index entries", () => {
    expect(relocateIndexLine(bytes('{"type":"message","spillPath":"/x"}'), "/n")).toBeUndefined();
    expect(relocateIndexLine(bytes("not json"), "/n")).toBeUndefined();
  });
});

describe("part spill files (issue 46)", () => {
  const spilledPart = (at: number, spillPath: string) => ({ at, kind: "spilled", type: "image", mimeType: "image/png", dataChars: 8, spillBytes: 40, spillPath, spillDigest: "xxh64:0123456789abcdef" });

  it("finds each spilled part's spillPath with its record and part, and nothing of the same name inside an inline part", () => {
    const line = indexLine([
      record({ contentHash: "h", parts: [{ at: 1, kind: "inline", part: { type: "widget", spillPath: "/inline/x" } }, spilledPart(2, "/old/blobs/c1_part2.json")] }),
      record({ toolCallId: "c2", spillPath: "/old/blobs/b.txt", contentHash: "h", parts: [spilledPart(0, "/old/blobs/c2_part0.json")] }),
    ]);
    const data = bytes(line);
    expect(spillPathSpans(data).map((s) => [s.record, s.part, JSON.parse(text(data.subarray(s.start, s.end)))])).toEqual([
      [0, 1, "/old/blobs/c1_part2.json"],
      [1, undefined, "/old/blobs/b.txt"],
      [1, 0, "/old/blobs/c2_part0.json"],
    ]);
  });

  it("relocates them with their own size and digest, and no content hash (the record's covers its parts)", () => {
    const line = indexLine([record({ spillPath: "/old/blobs/t.txt", spillBytes: 9, spillDigest: "xxh64:1111111111111111", contentHash: "covers-parts", parts: [spilledPart(1, "/old/blobs/p.json")] })]);
    const relocated = relocateIndexLine(bytes(line), "/new/blobs");
    expect(relocated?.ok).toBe(true);
    if (!relocated?.ok) return;
    expect(text(relocated.bytes)).toBe(line.replace("/old/blobs/t.txt", "/new/blobs/t.txt").replace("/old/blobs/p.json", "/new/blobs/p.json"));
    expect(relocated.spills.map((s) => [s.fileName, s.spillBytes, s.spillDigest, s.contentHash])).toEqual([
      ["t.txt", 9, "xxh64:1111111111111111", undefined],
      ["p.json", 40, "xxh64:0123456789abcdef", undefined],
    ]);
  });
});
