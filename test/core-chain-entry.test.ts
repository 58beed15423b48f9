// Persisted data builders and their JSON key order (UPSTREAM-FORMAT.md §1.1, §1.3, §2.1, §2.2).
// Key order is compared through JSON.stringify output strings, which preserve insertion order.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { backfilledIndexDataBytes, buildBackfilledIndexData, buildBackfilledRecord, buildChainEntry, buildRef } from "../src/core/chain-entry.js";
import type { ChainRange } from "../src/core/prune-types.js";

function range(opts: Partial<ChainRange> = {}): ChainRange {
  return {
    startUserTimestamp: 1000,
    middleToolCallIds: ["c1", "c2"],
    middleOccurrenceKeys: ["c1@1002", "c2@1004"],
    protectedToolCallIds: [],
    finalAssistantTimestamp: 1005,
    ...opts,
  };
}

describe("buildChainEntry — deterministic path", () => {
  it("key order: blockId, startUserTimestamp, droppedToolCallIds, finalAssistantTimestamp, toolRefs, compressedAt, rangeSummaryText, bodySource, protectedToolCallIds, droppedOccurrenceKeys", () => {
    const entry = buildChainEntry({
      chain: range({ protectedToolCallIds: ["c2"] }),
      blockId: "b3",
      toolRefs: ["t1"],
      compressedAt: 9999,
      rangeSummaryText: "BODY",
      deterministic: true,
    });
    expect(JSON.stringify(entry)).toBe(
      '{"blockId":"b3","startUserTimestamp":1000,"droppedToolCallIds":["c1","c2"],"finalAssistantTimestamp":1005,' +
        '"toolRefs":["t1"],"compressedAt":9999,"rangeSummaryText":"BODY","bodySource":"deterministic",' +
        '"protectedToolCallIds":["c2"],"droppedOccurrenceKeys":["c1@1002","c2@1004"]}',
    );
  });

  it("omits protectedToolCallIds when the chain has none", () => {
    const entry = buildChainEntry({ chain: range(), blockId: "b1", toolRefs: [], compressedAt: 5, rangeSummaryText: "B", deterministic: true });
    expect(JSON.stringify(entry)).toBe(
      '{"blockId":"b1","startUserTimestamp":1000,"droppedToolCallIds":["c1","c2"],"finalAssistantTimestamp":1005,' +
        '"toolRefs":[],"compressedAt":5,"rangeSummaryText":"B","bodySource":"deterministic",' +
        '"droppedOccurrenceKeys":["c1@1002","c2@1004"]}',
    );
    expect("protectedToolCallIds" in entry).toBe(false);
  });

  it("omits droppedOccurrenceKeys when the chain has no middle occurrence keys", () => {
    const entry = buildChainEntry({
      chain: range({ middleOccurrenceKeys: [], protectedToolCallIds: ["c1"] }),
      blockId: "b1",
      toolRefs: [],
      compressedAt: 5,
      rangeSummaryText: "B",
      deterministic: true,
    });
    expect(JSON.stringify(entry)).toBe(
      '{"blockId":"b1","startUserTimestamp":1000,"droppedToolCallIds":["c1","c2"],"finalAssistantTimestamp":1005,' +
        '"toolRefs":[],"compressedAt":5,"rangeSummaryText":"B","bodySource":"deterministic","protectedToolCallIds":["c1"]}',
    );
  });
});

describe("buildChainEntry — covered path", () => {
  it("pinned 6-field shape without fused text: no rangeSummaryText, no bodySource", () => {
    const entry = buildChainEntry({ chain: range({ middleOccurrenceKeys: [] }), blockId: "b2", toolRefs: ["t1", "t2"], compressedAt: 42, deterministic: false });
    expect(JSON.stringify(entry)).toBe(
      '{"blockId":"b2","startUserTimestamp":1000,"droppedToolCallIds":["c1","c2"],"finalAssistantTimestamp":1005,"toolRefs":["t1","t2"],"compressedAt":42}',
    );
    expect(Object.keys(entry)).toHaveLength(6);
  });

  it("with fused text, protected ids and occurrence keys: rangeSummaryText then the optional arrays, still no bodySource", () => {
    const entry = buildChainEntry({
      chain: range({ protectedToolCallIds: ["c1"] }),
      blockId: "b2",
      toolRefs: ["t1"],
      compressedAt: 42,
      rangeSummaryText: "fused",
      deterministic: false,
    });
    expect(JSON.stringify(entry)).toBe(
      '{"blockId":"b2","startUserTimestamp":1000,"droppedToolCallIds":["c1","c2"],"finalAssistantTimestamp":1005,' +
        '"toolRefs":["t1"],"compressedAt":42,"rangeSummaryText":"fused","protectedToolCallIds":["c1"],"droppedOccurrenceKeys":["c1@1002","c2@1004"]}',
    );
  });

  it("droppedToolCallIds is the chain's middleToolCallIds (copied, not aliased)", () => {
    const chain = range();
    const entry = buildChainEntry({ chain, blockId: "b1", toolRefs: [], compressedAt: 1, deterministic: false });
    expect(entry.droppedToolCallIds).toEqual(chain.middleToolCallIds);
    expect(entry.droppedToolCallIds).not.toBe(chain.middleToolCallIds);
  });
});

describe("buildBackfilledRecord", () => {
  const fields = { toolCallId: "call_0", toolName: "read", args: { path: "big.log" }, resultText: "full text", isError: false, resultTimestamp: 1150 };

  it("unspilled: toolCallId, toolName, args, resultText, isError, turnIndex(-1), timestamp(=resultTimestamp), resultTimestamp", () => {
    expect(JSON.stringify(buildBackfilledRecord(fields))).toBe(
      '{"toolCallId":"call_0","toolName":"read","args":{"path":"big.log"},"resultText":"full text","isError":false,"turnIndex":-1,"timestamp":1150,"resultTimestamp":1150}',
    );
  });

  it("spilled: resultText keeps its position as \"\"; spillBytes, resultPreview, spillPath, contentHash follow in that order", () => {
    const spill = { spillBytes: 9, resultPreview: "full", spillPath: "/s/x-blobs/call_0_1150.txt", contentHash: "ab".repeat(20), spillDigest: "xxh64:0123456789abcdef" };
    const json = JSON.stringify(buildBackfilledRecord(fields, spill));
    const upstreamPrefix =
      '{"toolCallId":"call_0","toolName":"read","args":{"path":"big.log"},"resultText":"","isError":false,"turnIndex":-1,"timestamp":1150,"resultTimestamp":1150,' +
      `"spillBytes":9,"resultPreview":"full","spillPath":"/s/x-blobs/call_0_1150.txt","contentHash":"${"ab".repeat(20)}"`;
    // Upstream's 12 keys form the exact prefix; chainpress appends only its own spillDigest after them.
    expect(json).toBe(`${upstreamPrefix},"spillDigest":"xxh64:0123456789abcdef"}`);
  });

  it("isError true is kept", () => {
    expect(buildBackfilledRecord({ ...fields, isError: true }).isError).toBe(true);
  });
});

describe("buildBackfilledIndexData", () => {
  it("key order: toolCalls, backfilled (literal true), refs", () => {
    const record = buildBackfilledRecord({ toolCallId: "a", toolName: "bash", args: {}, resultText: "x", isError: false, resultTimestamp: 7 });
    const data = buildBackfilledIndexData([record], [buildRef("t1", "a", 7)]);
    expect(JSON.stringify(data)).toBe(
      '{"toolCalls":[{"toolCallId":"a","toolName":"bash","args":{},"resultText":"x","isError":false,"turnIndex":-1,"timestamp":7,"resultTimestamp":7}],' +
        '"backfilled":true,"refs":[{"shortId":"t1","toolCallId":"a","resultTimestamp":7}]}',
    );
  });
});

describe("backfilledIndexDataBytes", () => {
  /** Texts where UTF-8 and JSON differ most: escapes, multi-byte characters, lone surrogates. */
  const text = fc
    .array(fc.oneof(fc.string({ unit: "grapheme", maxLength: 12 }), fc.constantFrom('"', "\\", "\n", "\u0000", "\ud83d", "😀", "é", "€".repeat(300))), { maxLength: 60 })
    .map((parts) => parts.join(""));
  const record = fc.record({ id: fc.string({ maxLength: 8 }), text, arg: text, isError: fc.boolean(), at: fc.nat() });

  it("is the UTF-8 of JSON.stringify of the same data, for any records and refs", () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 6 }), (inputs) => {
        const records = inputs.map((r) =>
          buildBackfilledRecord({ toolCallId: r.id, toolName: "bash", args: { command: r.arg }, resultText: r.text, isError: r.isError, resultTimestamp: r.at }),
        );
        const refs = inputs.map((r, i) => buildRef(`t${i + 1}`, r.id, r.at));
        const expected = Buffer.from(JSON.stringify(buildBackfilledIndexData(records, refs)), "utf8");
        expect(backfilledIndexDataBytes(records, refs).equals(expected)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it("grows past its first guess when nearly every character takes three bytes", () => {
    const records = [buildBackfilledRecord({ toolCallId: "a", toolName: "bash", args: {}, resultText: "€".repeat(100_000), isError: false, resultTimestamp: 1 })];
    const bytes = backfilledIndexDataBytes(records, []);
    expect(bytes.toString("utf8")).toBe(JSON.stringify(buildBackfilledIndexData(records, [])));
  });
});

describe("buildRef", () => {
  it("with timestamp: shortId, toolCallId, resultTimestamp", () => {
    expect(JSON.stringify(buildRef("t5", "call_0", 1150))).toBe('{"shortId":"t5","toolCallId":"call_0","resultTimestamp":1150}');
  });

  it("without timestamp: the key is absent (not undefined-valued)", () => {
    const ref = buildRef("t5", "call_0");
    expect(JSON.stringify(ref)).toBe('{"shortId":"t5","toolCallId":"call_0"}');
    expect("resultTimestamp" in ref).toBe(false);
  });

  it("a timestamp of 0 is kept", () => {
    expect(JSON.stringify(buildRef("t1", "a", 0))).toBe('{"shortId":"t1","toolCallId":"a","resultTimestamp":0}');
  });
});
