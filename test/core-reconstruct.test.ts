// reconstructState against UPSTREAM-FORMAT.md §8 (reconstructFromSession), §1.2 (summary refs and
// legacy toolCallIds), §3.3 (ref counter resumes at highest tN + 1), §3.5 (next block = max + 1 of
// the REGISTERED chain entries) and chainpress's documented divergence from §13.7 (malformed data is
// skipped with a warning instead of throwing).
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/core/content-hash.js";
import {
  CUSTOM_TYPE_CHAIN,
  CUSTOM_TYPE_DEDUP_ALIAS,
  CUSTOM_TYPE_DIAGNOSTIC,
  CUSTOM_TYPE_INDEX,
  CUSTOM_TYPE_SUMMARY,
} from "../src/core/custom-types.js";
import { reconstructState, summaryRefs } from "../src/core/reconstruct.js";
import type { SessionEntry } from "../src/core/session-types.js";
import { customEntry, customMessageEntry, messageEntry, user } from "./helpers/messages.js";

function rec(toolCallId: string, resultText: string, resultTimestamp?: number, extra: Record<string, unknown> = {}) {
  const r: Record<string, unknown> = { toolCallId, toolName: "bash", args: {}, resultText, isError: false, turnIndex: 0, timestamp: 1 };
  if (resultTimestamp !== undefined) r.resultTimestamp = resultTimestamp;
  return { ...r, ...extra };
}

const index = (toolCalls: unknown[], extra: Record<string, unknown> = {}, id?: string) => customEntry(CUSTOM_TYPE_INDEX, { toolCalls, ...extra }, id);
const summary = (content: unknown, details: unknown, id?: string) => customMessageEntry(CUSTOM_TYPE_SUMMARY, content, details, id);
const chain = (blockId: unknown, start: unknown, id?: string) =>
  customEntry(CUSTOM_TYPE_CHAIN, { blockId, startUserTimestamp: start, droppedToolCallIds: [], finalAssistantTimestamp: 5, toolRefs: [], compressedAt: 1 }, id);
const alias = (data: Record<string, unknown>) => customEntry(CUSTOM_TYPE_DEDUP_ALIAS, data);

describe("reconstructState — summaries", () => {
  it("registers refs from details.toolCallRefs (alias both ways)", () => {
    const { state, warnings } = reconstructState([
      summary("S", { toolCallRefs: [{ shortId: "t1", toolCallId: "a", resultTimestamp: 10 }, { shortId: "t2", toolCallId: "b" }], toolNames: ["bash"], turnIndex: 1, timestamp: 1 }),
    ]);
    expect(warnings).toEqual([]);
    expect(state.keyByRef.get("t1")).toBe("a@10");
    expect(state.refByKey.get("a@10")).toBe("t1");
    expect(state.keyByRef.get("t2")).toBe("b");
  });

  it("legacy details.toolCallIds become refs with shortId === toolCallId, registering no alias", () => {
    const { state } = reconstructState([summary("S", { toolCallIds: ["call_1", "call_2"] })]);
    expect(state.keyByRef.size).toBe(0);
    expect(state.refByKey.size).toBe(0);
    expect(summaryRefs({ toolCallIds: ["call_1"] })).toEqual([{ shortId: "call_1", toolCallId: "call_1" }]);
    // The summary body still covers the bare ids.
    expect(state.hasSummaryCovering(["call_2"])).toBe(true);
  });

  it("drops refs lacking a string shortId/toolCallId and drops a non-number resultTimestamp", () => {
    expect(
      summaryRefs({
        toolCallRefs: [{ shortId: 1, toolCallId: "a" }, { toolCallId: "b" }, { shortId: "t3" }, { shortId: "t4", toolCallId: "d", resultTimestamp: "12" }, null],
      }),
    ).toEqual([{ shortId: "t4", toolCallId: "d" }]);
  });

  it("summary body text is registered under each ref's occurrence key (this is what coverage reads)", () => {
    const { state } = reconstructState([summary("The summary", { toolCallRefs: [{ shortId: "t1", toolCallId: "a", resultTimestamp: 10 }] })]);
    expect(state.hasSummaryCovering(["a@10"])).toBe(true);
    expect(state.hasSummaryCovering(["a"])).toBe(false);
    expect(state.summaryTextsFor(["a@10"])).toEqual(["The summary"]);
  });

  it("array content: text parts joined with \\n", () => {
    const { state } = reconstructState([
      summary([{ type: "text", text: "p1" }, { type: "image" }, { type: "text", text: "p2" }], { toolCallRefs: [{ shortId: "t1", toolCallId: "a", resultTimestamp: 1 }] }),
    ]);
    expect(state.summaryTextsFor(["a@1"])).toEqual(["p1\np2"]);
  });

  it("empty text is not registered as a body, but its refs still are", () => {
    const { state } = reconstructState([summary("", { toolCallRefs: [{ shortId: "t1", toolCallId: "a", resultTimestamp: 1 }] })]);
    expect(state.hasSummaryCovering(["a@1"])).toBe(false);
    expect(state.keyByRef.get("t1")).toBe("a@1");
  });

  it("ref counter resumes at highest tN + 1 (t8 after t7)", () => {
    const { state } = reconstructState([
      summary("S1", { toolCallRefs: [{ shortId: "t1", toolCallId: "a", resultTimestamp: 1 }, { shortId: "t7", toolCallId: "b", resultTimestamp: 2 }] }),
      summary("S2", { toolCallRefs: [{ shortId: "t3", toolCallId: "c", resultTimestamp: 3 }] }),
    ]);
    expect(state.reserveRefs(1)).toEqual(["t8"]);
  });

  it("only custom_message entries are read as summaries", () => {
    const { state } = reconstructState([customEntry(CUSTOM_TYPE_SUMMARY, { toolCallRefs: [{ shortId: "t5", toolCallId: "a" }] })]);
    expect(state.keyByRef.size).toBe(0);
    expect(state.nextRefNumber).toBe(1);
  });
});

describe("reconstructState — index entries", () => {
  it("normal entries index records under occurrence keys and seed dedup", () => {
    const { state } = reconstructState([index([rec("a", "out A", 10), rec("b", "out B", 20)])]);
    expect([...state.records.keys()]).toEqual(["a@10", "b@20"]);
    expect(state.dedupCanonicals().get(contentHash("bash", "out A"))).toBe("a@10");
    expect(state.dedupCanonicals().size).toBe(2);
  });

  it("dedup seeding is first-seen-wins across entries", () => {
    const { state } = reconstructState([index([rec("first", "same", 1)]), index([rec("second", "same", 2)])]);
    expect(state.dedupCanonicals().get(contentHash("bash", "same"))).toBe("first@1");
  });

  it("a stored contentHash seeds dedup instead of hashing the (empty) spilled text", () => {
    const h = contentHash("bash", "the full body");
    const { state } = reconstructState([index([rec("s", "", 1, { contentHash: h, spillPath: "/x", spillBytes: 13, resultPreview: "the" })])]);
    expect(state.dedupCanonicals().get(h)).toBe("s@1");
  });

  it("backfilled entries restore records and refs but NOT dedup canonicals", () => {
    const { state } = reconstructState([
      index([rec("a", "same", 10, { turnIndex: -1, timestamp: 10 })], { backfilled: true, refs: [{ shortId: "t5", toolCallId: "a", resultTimestamp: 10 }] }),
      index([rec("b", "same", 20)]),
    ]);
    expect(state.isIndexed("a@10")).toBe(true);
    expect(state.keyByRef.get("t5")).toBe("a@10");
    expect(state.refByKey.get("a@10")).toBe("t5");
    expect(state.nextRefNumber).toBe(6);
    // The later normal record, not the earlier backfilled one, is the canonical.
    expect(state.dedupCanonicals().get(contentHash("bash", "same"))).toBe("b@20");
  });

  it("refs on a NON-backfilled index entry are ignored", () => {
    const { state } = reconstructState([index([rec("a", "x", 1)], { refs: [{ shortId: "t9", toolCallId: "a", resultTimestamp: 1 }] })]);
    expect(state.keyByRef.size).toBe(0);
    expect(state.nextRefNumber).toBe(1);
  });

  it("backfilled must be the literal true (\"true\" is a normal entry)", () => {
    const { state } = reconstructState([index([rec("a", "x", 1)], { backfilled: "true", refs: [{ shortId: "t9", toolCallId: "a", resultTimestamp: 1 }] })]);
    expect(state.keyByRef.size).toBe(0);
    expect(state.dedupCanonicals().size).toBe(1);
  });

  it("legacy records without resultTimestamp are keyed by the bare id", () => {
    const { state } = reconstructState([index([rec("call_legacy", "x")])]);
    expect(state.isIndexed("call_legacy")).toBe(true);
    expect(state.keysOf("call_legacy")).toEqual(["call_legacy"]);
    expect(state.dedupCanonicals().get(contentHash("bash", "x"))).toBe("call_legacy");
  });

  it("a later record for the same key overwrites; bare-id key list stays unique", () => {
    const { state } = reconstructState([index([rec("a", "v1", 1)]), index([rec("a", "v2", 1)])]);
    expect(state.records.get("a@1")!.resultText).toBe("v2");
    expect(state.keysOf("a")).toEqual(["a@1"]);
  });
});

describe("reconstructState — dedup aliases", () => {
  it("an alias inherits the original's ref when the summary comes AFTER the alias (order-independent)", () => {
    const { state } = reconstructState([
      index([rec("orig", "x", 10)]),
      alias({ newToolCallId: "dup", originalToolCallId: "orig", newResultTimestamp: 20, originalResultTimestamp: 10 }),
      summary("S", { toolCallRefs: [{ shortId: "t1", toolCallId: "orig", resultTimestamp: 10 }] }),
    ]);
    expect(state.dedupAliases.get("dup@20")).toBe("orig@10");
    expect(state.refByKey.get("dup@20")).toBe("t1");
    // key→alias only: t1 still names the original.
    expect(state.keyByRef.get("t1")).toBe("orig@10");
  });

  it("an alias inherits the ref when the summary comes BEFORE the alias too", () => {
    const { state } = reconstructState([
      summary("S", { toolCallRefs: [{ shortId: "t1", toolCallId: "orig", resultTimestamp: 10 }] }),
      alias({ newToolCallId: "dup", originalToolCallId: "orig", newResultTimestamp: 20, originalResultTimestamp: 10 }),
    ]);
    expect(state.refByKey.get("dup@20")).toBe("t1");
  });

  it("alias sides without timestamps are bare-id keys", () => {
    const { state } = reconstructState([alias({ newToolCallId: "dup", originalToolCallId: "orig" })]);
    expect(state.dedupAliases.get("dup")).toBe("orig");
  });

  it("dedup aliases do not change dedup canonicals", () => {
    const { state } = reconstructState([index([rec("orig", "x", 10)]), alias({ newToolCallId: "dup", originalToolCallId: "orig", newResultTimestamp: 20, originalResultTimestamp: 10 })]);
    expect([...state.dedupCanonicals().values()]).toEqual(["orig@10"]);
  });
});

describe("reconstructState — chain registry and block ids", () => {
  it("registers chains keyed by startUserTimestamp; a later entry with the same start wins", () => {
    const { state } = reconstructState([chain("b1", 1000), chain("b2", 1000)]);
    expect(state.chains.size).toBe(1);
    expect(state.chains.get(1000)!.blockId).toBe("b2");
  });

  it("no chains → next block id b1", () => {
    expect(reconstructState([]).state.reserveBlockId()).toBe("b1");
  });

  it("b1, b2 → next b3", () => {
    expect(reconstructState([chain("b1", 1), chain("b2", 2)]).state.reserveBlockId()).toBe("b3");
  });

  it("gapped ids → max + 1 (b1, b4 → b5), gaps not filled", () => {
    expect(reconstructState([chain("b4", 1), chain("b1", 2)]).state.reserveBlockId()).toBe("b5");
  });

  it("t8/b5 after t7/b4 (verified upstream resumption, §12)", () => {
    const { state } = reconstructState([
      summary("S", { toolCallRefs: [{ shortId: "t7", toolCallId: "a", resultTimestamp: 1 }] }),
      chain("b4", 100),
    ]);
    expect(state.reserveRefs(1)).toEqual(["t8"]);
    expect(state.reserveBlockId()).toBe("b5");
  });

  it("each reconstruction starts fresh (rebuild resets after prior issues)", () => {
    const first = reconstructState([chain("b3", 1)]).state;
    first.reserveBlockId();
    first.reserveBlockId();
    expect(reconstructState([chain("b1", 1)]).state.reserveBlockId()).toBe("b2");
  });

  it("next block id never reuses an id written in the session, even one whose entry was overwritten", () => {
    // Deliberate divergence from §3.5 + §8 (upstream would issue b3 here and could later issue b9
    // a second time): the registry holds only b2 (same start, later wins), but b9 is in the file.
    const { state } = reconstructState([chain("b9", 1000), chain("b2", 1000)]);
    expect(state.chains.get(1000)!.blockId).toBe("b2");
    expect(state.reserveBlockId()).toBe("b10");
  });
});

describe("reconstructState — malformed data is skipped with a warning, never thrown", () => {
  it("index entry without data (upstream throws here, §13.7)", () => {
    const bad = customEntry(CUSTOM_TYPE_INDEX, undefined, "deadbeef");
    let result!: ReturnType<typeof reconstructState>;
    expect(() => {
      result = reconstructState([bad, index([rec("ok", "x", 1)])]);
    }).not.toThrow();
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]!.entryId).toBe("deadbeef");
    expect(result.state.isIndexed("ok@1")).toBe(true);
  });

  it("index entry whose toolCalls is not an array", () => {
    const { state, warnings } = reconstructState([customEntry(CUSTOM_TYPE_INDEX, { toolCalls: { a: 1 } }, "e1"), customEntry(CUSTOM_TYPE_INDEX, { toolCalls: null }, "e2")]);
    expect(warnings.map((w) => w.entryId)).toEqual(["e1", "e2"]);
    expect(state.records.size).toBe(0);
  });

  it("a record without toolCallId is skipped; its siblings are indexed", () => {
    const { state, warnings } = reconstructState([index([{ toolName: "bash", resultText: "x" }, rec("good", "y", 2), null], {}, "e3")]);
    expect([...state.records.keys()]).toEqual(["good@2"]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.entryId).toBe("e3");
  });

  it("a chain entry without blockId (or with an empty one) is not registered", () => {
    const { state, warnings } = reconstructState([chain(undefined, 1, "c1"), chain("", 2, "c2"), customEntry(CUSTOM_TYPE_CHAIN, undefined, "c3")]);
    expect(state.chains.size).toBe(0);
    expect(warnings.map((w) => w.entryId)).toEqual(["c1", "c2", "c3"]);
    expect(state.reserveBlockId()).toBe("b1");
  });

  it("a chain entry whose startUserTimestamp is not a number is not registered", () => {
    const { state, warnings } = reconstructState([chain("b1", "1000", "c4")]);
    expect(state.chains.size).toBe(0);
    expect(warnings).toHaveLength(1);
  });

  it("a dedup alias missing one id is skipped", () => {
    const { state, warnings } = reconstructState([alias({ newToolCallId: "dup" })]);
    expect(state.dedupAliases.size).toBe(0);
    expect(warnings).toHaveLength(1);
  });

  it("unrelated entries (messages, diagnostics, unknown types) are ignored without warnings", () => {
    const entries: SessionEntry[] = [
      messageEntry(user("hi", 1)),
      customEntry(CUSTOM_TYPE_DIAGNOSTIC, { kind: "orphan-sweep", detail: "x" }),
      customEntry("third-party", { anything: true }),
      { type: "compaction", id: "c", parentId: null, timestamp: "t", summary: "s" } as SessionEntry,
    ];
    const { state, warnings } = reconstructState(entries);
    expect(warnings).toEqual([]);
    expect(state.records.size + state.chains.size + state.keyByRef.size).toBe(0);
  });
});

describe("reconstructState — reading is side-effect free", () => {
  it("does not mutate the entries it reads (records keep their persisted fields)", () => {
    // Not a format rule but a purity contract (prune-state.ts / reconstruct.ts: "Pure", "rebuilt from
    // session entries"): the extension passes pi's own live entry objects, which pi may write again
    // (e.g. when it branches a session into a new file).
    const raw = { toolCallId: "a", toolName: "bash", args: {}, isError: false, turnIndex: 0, timestamp: 1, resultTimestamp: null };
    const entry = index([raw]);
    const before = JSON.stringify(entry);
    reconstructState([entry]);
    expect(JSON.stringify(entry)).toBe(before);
  });
});
