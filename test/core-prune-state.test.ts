// PruneState (the indexer / chain registry / block issuer) against UPSTREAM-FORMAT.md §3.2 (dedup
// map: first-seen-wins, normal records only), §3.3 (ref registration + counter), §3.5 (block refs),
// §4.3 (coverage: any overlap, false for an empty list) and §4.6 step 5 (refs in key order).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/core/content-hash.js";
import { PruneState } from "../src/core/prune-state.js";
import type { ChainCompressionEntry, ToolCallRecord } from "../src/core/prune-types.js";

function record(toolCallId: string, resultText: string, resultTimestamp?: number, extra: Partial<ToolCallRecord> = {}): ToolCallRecord {
  const r: ToolCallRecord = { toolCallId, toolName: "bash", args: {}, resultText, isError: false, turnIndex: 1, timestamp: 1 };
  if (resultTimestamp !== undefined) r.resultTimestamp = resultTimestamp;
  return { ...r, ...extra };
}

function chainEntry(blockId: string, start: number): ChainCompressionEntry {
  return { blockId, startUserTimestamp: start, droppedToolCallIds: [], finalAssistantTimestamp: start + 1, toolRefs: [], compressedAt: 0 };
}

describe("PruneState — records", () => {
  it("indexes under the occurrence key; legacy records under the bare id", () => {
    const s = new PruneState();
    s.indexRecord(record("a", "x", 10), { seedDedup: true });
    s.indexRecord(record("legacy", "y"), { seedDedup: true });
    expect([...s.records.keys()]).toEqual(["a@10", "legacy"]);
    expect(s.isIndexed("a@10")).toBe(true);
    expect(s.isIndexed("a")).toBe(false);
  });

  it("a later duplicate overwrites the record; the bare-id key list stays unique, first-seen order", () => {
    const s = new PruneState();
    s.indexRecord(record("a", "v1", 10), { seedDedup: false });
    s.indexRecord(record("a", "v2", 20), { seedDedup: false });
    s.indexRecord(record("a", "v3", 10), { seedDedup: false });
    expect(s.records.get("a@10")!.resultText).toBe("v3");
    expect(s.keysOf("a")).toEqual(["a@10", "a@20"]);
  });

  it("a key hint that is not the record's occurrence key changes nothing: the record and its ref go under their own key", () => {
    const s = new PruneState();
    s.indexRecord(record("a", "x", 10), { seedDedup: false }, "b@10");
    s.indexRecord(record("c", "y", 30), { seedDedup: false }, "c@30");
    s.registerRef({ shortId: "t1", toolCallId: "a", resultTimestamp: 10 }, "b@10");
    expect([...s.records.keys()]).toEqual(["a@10", "c@30"]);
    expect(s.keysOf("a")).toEqual(["a@10"]);
    expect(s.keysOf("b")).toEqual([]);
    expect(s.keyByRef.get("t1")).toBe("a@10");
    expect(s.displayRef("a@10")).toBe("t1");
  });
});

describe("PruneState — keys by bare id", () => {
  it("whenever keysOf is first asked, it answers as if the list had been kept all along (ids that collide with keys included)", () => {
    const ids = fc.constantFrom("a", "b", "a@1", "a@2", "@1", "c@x");
    const timestamps = fc.option(fc.constantFrom(1, 2, -0, 1.5, Number.NaN), { nil: undefined });
    const step = fc.oneof(fc.record({ id: ids, ts: timestamps }), fc.record({ ask: ids }));
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const state = new PruneState();
        const expected = new Map<string, string[]>();
        for (const s of steps) {
          if ("ask" in s) {
            expect(state.keysOf(s.ask)).toEqual(expected.get(s.ask) ?? []);
            continue;
          }
          state.indexRecord(record(s.id, "x", s.ts), { seedDedup: false });
          const key = s.ts === undefined ? s.id : `${s.id}@${s.ts}`;
          const keys = expected.get(s.id) ?? [];
          if (!keys.includes(key)) expected.set(s.id, [...keys, key]);
        }
        for (const [id, keys] of expected) expect(state.keysOf(id)).toEqual(keys);
      }),
      { numRuns: 500 },
    );
  });
});

describe("PruneState — short refs", () => {
  it("whenever keyByRef is first read, it holds what a map kept all along would, in the same order", () => {
    const step = fc.oneof(
      fc.record({ shortId: fc.constantFrom("t1", "t2", "t3", "x", "a@1"), id: fc.constantFrom("a", "b"), ts: fc.option(fc.constantFrom(1, 2), { nil: undefined }) }),
      fc.record({ read: fc.constant(true) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const state = new PruneState();
        const expected = new Map<string, string>();
        for (const s of steps) {
          if ("read" in s) {
            expect([...state.keyByRef]).toEqual([...expected]);
            continue;
          }
          state.registerRef({ shortId: s.shortId, toolCallId: s.id, ...(s.ts === undefined ? {} : { resultTimestamp: s.ts }) });
          const key = s.ts === undefined ? s.id : `${s.id}@${s.ts}`;
          if (s.shortId !== key) expected.set(s.shortId, key);
        }
        expect([...state.keyByRef]).toEqual([...expected]);
      }),
      { numRuns: 500 },
    );
  });

  it("registers alias→key and key→alias when shortId differs from the key", () => {
    const s = new PruneState();
    s.registerRef({ shortId: "t3", toolCallId: "a", resultTimestamp: 10 });
    expect(s.keyByRef.get("t3")).toBe("a@10");
    expect(s.refByKey.get("a@10")).toBe("t3");
  });

  it("a ref whose shortId equals its key registers no alias (legacy toolCallIds)", () => {
    const s = new PruneState();
    s.registerRef({ shortId: "call_1", toolCallId: "call_1" });
    expect(s.keyByRef.size).toBe(0);
    expect(s.refByKey.size).toBe(0);
  });

  it("skips refs with an empty shortId or toolCallId", () => {
    const s = new PruneState();
    s.registerRef({ shortId: "", toolCallId: "a" });
    s.registerRef({ shortId: "t9", toolCallId: "" });
    expect(s.keyByRef.size + s.refByKey.size).toBe(0);
    expect(s.nextRefNumber).toBe(1);
  });

  it("the counter becomes max(counter, N+1) for t<N> refs, and never goes down", () => {
    const s = new PruneState();
    s.registerRef({ shortId: "t7", toolCallId: "a", resultTimestamp: 1 });
    expect(s.nextRefNumber).toBe(8);
    s.registerRef({ shortId: "t2", toolCallId: "b", resultTimestamp: 2 });
    expect(s.nextRefNumber).toBe(8);
    expect(s.reserveRefs(2)).toEqual(["t8", "t9"]);
    expect(s.nextRefNumber).toBe(10);
  });

  it("non-t<N> short ids (T7, t7a, x7) do not move the counter", () => {
    const s = new PruneState();
    for (const shortId of ["T7", "t7a", "x7", "t"]) s.registerRef({ shortId, toolCallId: "id", resultTimestamp: 1 });
    expect(s.nextRefNumber).toBe(1);
  });

  it("later registrations overwrite both maps", () => {
    const s = new PruneState();
    s.registerRef({ shortId: "t1", toolCallId: "a", resultTimestamp: 1 });
    s.registerRef({ shortId: "t2", toolCallId: "a", resultTimestamp: 1 });
    expect(s.refByKey.get("a@1")).toBe("t2");
    expect(s.keyByRef.get("t2")).toBe("a@1");
  });

  it("reserveRefs starts at t1 and is consecutive", () => {
    const s = new PruneState();
    expect(s.reserveRefs(3)).toEqual(["t1", "t2", "t3"]);
    expect(s.reserveRefs(0)).toEqual([]);
    expect(s.reserveRefs(1)).toEqual(["t4"]);
  });

  it("refsForKeys returns refs in key order, skipping keys without one", () => {
    const s = new PruneState();
    s.registerRef({ shortId: "t2", toolCallId: "b", resultTimestamp: 2 });
    s.registerRef({ shortId: "t1", toolCallId: "a", resultTimestamp: 1 });
    expect(s.refsForKeys(["b@2", "zzz@9", "a@1"])).toEqual(["t2", "t1"]);
  });

  it("displayRef falls back to the bare id when a key has no ref", () => {
    const s = new PruneState();
    s.registerRef({ shortId: "t1", toolCallId: "a", resultTimestamp: 1 });
    expect(s.displayRef("a@1")).toBe("t1");
    expect(s.displayRef("b@5")).toBe("b");
  });
});

describe("PruneState — block ids", () => {
  it("issues b1 first, then b2, b3 …", () => {
    const s = new PruneState();
    expect([s.reserveBlockId(), s.reserveBlockId(), s.reserveBlockId()]).toEqual(["b1", "b2", "b3"]);
  });

  it("registered chains push the next block id to max + 1 (gaps not filled)", () => {
    const s = new PruneState();
    s.registerChain(chainEntry("b1", 100));
    s.registerChain(chainEntry("b4", 200));
    s.registerChain(chainEntry("b2", 300));
    expect(s.reserveBlockId()).toBe("b5");
  });

  it("isCompressed is keyed by start user timestamp", () => {
    const s = new PruneState();
    s.registerChain(chainEntry("b1", 100));
    expect(s.isCompressed(100)).toBe(true);
    expect(s.isCompressed(101)).toBe(false);
  });
});

describe("PruneState — coverage", () => {
  it("hasSummaryCovering is false for an empty key list", () => {
    const s = new PruneState();
    s.registerSummaryText(["a@1"], "summary");
    expect(s.hasSummaryCovering([])).toBe(false);
  });

  it("any single overlapping key means covered (exact string match)", () => {
    const s = new PruneState();
    s.registerSummaryText(["a@1"], "summary");
    expect(s.hasSummaryCovering(["x@9", "a@1"])).toBe(true);
    expect(s.hasSummaryCovering(["a"])).toBe(false);
    expect(s.hasSummaryCovering(["a@2"])).toBe(false);
  });

  it("summaryTextsFor returns distinct texts in key order", () => {
    const s = new PruneState();
    s.registerSummaryText(["a@1", "b@2"], "S1");
    s.registerSummaryText(["b@2"], "S2");
    s.registerSummaryText(["b@2"], "S1");
    expect(s.summaryTextsFor(["b@2", "a@1"])).toEqual(["S1", "S2"]);
  });
});

describe("PruneState — dedup", () => {
  it("dedup canonicals are first-seen-wins over normal records", () => {
    const s = new PruneState();
    s.indexRecord(record("a", "same output", 1), { seedDedup: true });
    s.indexRecord(record("b", "same output  \n", 2), { seedDedup: true }); // normalises to the same hash
    expect(s.dedupCanonicals().get(contentHash("bash", "same output"))).toBe("a@1");
    expect(s.dedupCanonicals().size).toBe(1);
  });

  it("a stored contentHash is used instead of hashing resultText (spilled records)", () => {
    const s = new PruneState();
    s.indexRecord(record("a", "", 1, { contentHash: "f".repeat(40) }), { seedDedup: true });
    expect([...s.dedupCanonicals().entries()]).toEqual([["f".repeat(40), "a@1"]]);
  });

  it("records indexed with seedDedup:false (backfilled) never become canonicals", () => {
    const s = new PruneState();
    s.indexRecord(record("bf", "same", 1), { seedDedup: false });
    expect(s.dedupCanonicals().size).toBe(0);
    s.indexRecord(record("n", "same", 2), { seedDedup: true });
    expect(s.dedupCanonicals().get(contentHash("bash", "same"))).toBe("n@2");
  });

  it("a dedup alias resolves to the original record and inherits its ref (key→alias only)", () => {
    const s = new PruneState();
    s.indexRecord(record("a", "out", 1), { seedDedup: true });
    s.registerRef({ shortId: "t1", toolCallId: "a", resultTimestamp: 1 });
    s.registerDedupAlias("b@2", "a@1");
    expect(s.recordForKey("b@2")).toBe(s.records.get("a@1"));
    expect(s.refByKey.get("b@2")).toBe("t1");
    expect(s.keyByRef.get("t1")).toBe("a@1");
  });

  it("an alias of an original without a ref gets no ref", () => {
    const s = new PruneState();
    s.indexRecord(record("a", "out", 1), { seedDedup: true });
    s.registerDedupAlias("b@2", "a@1");
    expect(s.refByKey.has("b@2")).toBe(false);
    expect(s.displayRef("b@2")).toBe("b");
  });
});
