/**
 * The spec's acceptance criteria for uncovered chains (deterministic backfill), through the real
 * reader, appender, worker task and session files on disk.
 */

import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { CUSTOM_TYPE_CHAIN, CUSTOM_TYPE_DIAGNOSTIC, CUSTOM_TYPE_INDEX, CUSTOM_TYPE_SUMMARY } from "../src/core/custom-types.js";
import { DETERMINISTIC_BODY_HEADLINE } from "../src/core/deterministic-body.js";
import { findRecords, formatQueryResult } from "../src/core/query.js";
import { pruneMessages } from "../src/core/render/prune-messages.js";
import { contextMessages } from "../src/core/session-tree.js";
import { loadSessionModel } from "../src/main/session-model.js";
import { createChainRunner } from "../src/main/chain-runner.js";
import { compressFile, failNth } from "./helpers/compress-harness.js";
import { calls, customEntries, SessionBuilder } from "./helpers/session-builder.js";

function twoChainSession() {
  const s = new SessionBuilder();
  const first = s.chain("inspect the repo", [
    { id: "c1", name: "read", args: { path: "big.log" }, output: "log line\n".repeat(5) },
    { id: "c2", name: "bash", args: { command: "wc -l big.log" }, output: "5 big.log" },
    { id: "c3", name: "bash", args: { command: "ls" }, output: "a\nb" },
  ]);
  s.tick(2500);
  const second = s.chain("second task", calls("k", 2));
  return { s, first, second };
}

describe("zero-coverage chain", () => {
  it("is compressed with count, histogram, duration and refs in a deterministic body", async () => {
    const { s, first } = twoChainSession();
    const file = s.writeTemp();
    const { result } = await compressFile(file);
    expect(result.compressedEntries.map((e) => e.blockId)).toEqual(["b1", "b2"]);
    const entry = customEntries(file, CUSTOM_TYPE_CHAIN)[0]!.data;
    expect(entry.startUserTimestamp).toBe(first);
    expect(entry.bodySource).toBe("deterministic");
    expect(entry.toolRefs).toEqual(["t1", "t2", "t3"]);
    const lines = entry.rangeSummaryText.split("\n");
    expect(lines[0]).toBe(DETERMINISTIC_BODY_HEADLINE);
    expect(lines[1]).toBe("Calls: 3");
    expect(lines[2]).toBe("Tools: bash x2, read x1");
    // Results are 20 ms apart: c1 at +20, c3 at +60 from the user message → 0 s.
    expect(lines[3]).toMatch(/^Span: \S+Z -> \S+Z \(0s\)$/);
    expect(lines[4]).toBe('First: read {"path":"big.log"}');
    expect(lines[5]).toBe('Last: bash {"command":"ls"}');
    expect(lines[6]).toBe("Refs: t1, t2, t3");
  });

  it("persists one backfilled index entry per chain, before its chain entry (group commit layout)", async () => {
    const { s } = twoChainSession();
    const file = s.writeTemp();
    await compressFile(file);
    const appended = fs.readFileSync(file, "utf8").trim().split("\n").slice(s.lines.length).map((l) => JSON.parse(l));
    // One commit group: both index entries (one fsync), then both chain entries (one fsync).
    expect(appended.map((l) => l.customType)).toEqual([CUSTOM_TYPE_INDEX, CUSTOM_TYPE_INDEX, CUSTOM_TYPE_CHAIN, CUSTOM_TYPE_CHAIN]);
    expect(appended[2].data.toolRefs).toEqual(appended[0].data.refs.map((r: any) => r.shortId));
    expect(appended[3].data.toolRefs).toEqual(appended[1].data.refs.map((r: any) => r.shortId));
    const index = appended[0].data;
    expect(Object.keys(index)).toEqual(["toolCalls", "backfilled", "refs"]);
    expect(index.backfilled).toBe(true);
    expect(index.refs).toEqual([
      { shortId: "t1", toolCallId: "c1", resultTimestamp: index.toolCalls[0].resultTimestamp },
      { shortId: "t2", toolCallId: "c2", resultTimestamp: index.toolCalls[1].resultTimestamp },
      { shortId: "t3", toolCallId: "c3", resultTimestamp: index.toolCalls[2].resultTimestamp },
    ]);
    expect(index.toolCalls[0]).toMatchObject({ toolCallId: "c1", toolName: "read", args: { path: "big.log" }, resultText: "log line\n".repeat(5), isError: false, turnIndex: -1 });
    expect(index.toolCalls[0].timestamp).toBe(index.toolCalls[0].resultTimestamp);
  });

  it("makes records queryable by raw id and by tN, showing Turn: -1", async () => {
    const { s } = twoChainSession();
    const file = s.writeTemp();
    const { model } = await compressFile(file);
    for (const state of [model.state, (await loadSessionModel(file)).state]) {
      const byRef = findRecords(state, "t2");
      const byId = findRecords(state, "c2");
      expect(byRef.map((m) => m.record.resultText)).toEqual(["5 big.log"]);
      expect(byId.map((m) => m.record.resultText)).toEqual(["5 big.log"]);
      const text = formatQueryResult("t2", byRef, ["5 big.log"]);
      expect(text).toContain("Turn: -1");
      expect(text).toContain("Tool: bash");
    }
  });

  it("never seeds the dedup canonicals with backfilled records", async () => {
    const { s } = twoChainSession();
    const file = s.writeTemp();
    const { model } = await compressFile(file);
    expect(model.state.records.size).toBe(5);
    expect(model.state.dedupCanonicals().size).toBe(0);
    expect((await loadSessionModel(file)).state.dedupCanonicals().size).toBe(0);
  });

  it("renders the chain as one <compressed-chain> message with working refs", async () => {
    const { s } = twoChainSession();
    const file = s.writeTemp();
    await compressFile(file);
    const model = await loadSessionModel(file);
    const rendered = pruneMessages(contextMessages(model.branch), model.state, {}).messages;
    expect(rendered.map((m) => m.role)).toEqual(["user", "user", "assistant", "user", "user", "assistant"]);
    const synthetic = (rendered[1] as any).content[0].text as string;
    expect(synthetic.startsWith('<compressed-chain id="b1" tools="t1,t2,t3">\n' + DETERMINISTIC_BODY_HEADLINE)).toBe(true);
    expect(JSON.stringify(rendered)).not.toContain("log line");
  });

  it("handles three uncovered chains in one call with three entries", async () => {
    const s = new SessionBuilder();
    for (const p of ["a", "b", "c"]) s.chain(`task ${p}`, calls(p, 2));
    const file = s.writeTemp();
    const { result } = await compressFile(file);
    expect(result.compressedEntries.map((e) => [e.blockId, e.toolRefs])).toEqual([
      ["b1", ["t1", "t2"]],
      ["b2", ["t3", "t4"]],
      ["b3", ["t5", "t6"]],
    ]);
    expect(customEntries(file, CUSTOM_TYPE_CHAIN).every((e) => e.data.bodySource === "deterministic")).toBe(true);
  });

  it("gives an empty-args chain a non-empty body and caps excerpts at 200 units", async () => {
    const s = new SessionBuilder();
    s.chain("empty", [
      { id: "e1", name: "bash", args: {}, output: "" },
      { id: "e2", name: "write", args: { content: "y".repeat(300) }, output: "" },
    ]);
    const file = s.writeTemp();
    const { result } = await compressFile(file);
    const body = result.compressedEntries[0]!.rangeSummaryText!;
    expect(body.split("\n")).toHaveLength(7);
    expect(body).toContain("First: bash {}");
    const last = body.split("\n")[5]!.slice("Last: write ".length);
    expect(last).toHaveLength(203);
    expect(last.endsWith("...")).toBe(true);
  });
});

describe("covered chains", () => {
  it("take upstream's covered path: pinned entry shape, no bodySource, no backfill", async () => {
    const s = new SessionBuilder();
    s.user("covered task");
    const [ts] = s.turn([{ id: "cv1", name: "bash", args: { command: "pwd" }, output: "/work" }]);
    s.reply("done");
    s.customMessage(CUSTOM_TYPE_SUMMARY, "summary of pwd", { toolCallRefs: [{ shortId: "t1", toolCallId: "cv1", resultTimestamp: ts }], toolNames: ["bash"], turnIndex: 0, timestamp: ts });
    s.custom(CUSTOM_TYPE_INDEX, { toolCalls: [{ toolCallId: "cv1", toolName: "bash", args: { command: "pwd" }, resultText: "/work", isError: false, turnIndex: 0, timestamp: ts, resultTimestamp: ts }] });
    const file = s.writeTemp();
    let ran = 0;
    const { result } = await compressFile(file, { runner: { workers: 0, run: async () => { ran++; throw new Error("no"); }, close: async () => {} } });
    expect(ran).toBe(0);
    expect(customEntries(file, CUSTOM_TYPE_INDEX)).toHaveLength(1);
    const entry = customEntries(file, CUSTOM_TYPE_CHAIN)[0]!.data;
    expect(Object.keys(entry)).toEqual(["blockId", "startUserTimestamp", "droppedToolCallIds", "finalAssistantTimestamp", "toolRefs", "compressedAt", "droppedOccurrenceKeys"]);
    expect(entry).toEqual(result.compressedEntries[0]);
    expect(entry.toolRefs).toEqual(["t1"]);
    expect(entry.droppedOccurrenceKeys).toEqual([`cv1@${ts}`]);
  });

  it("one covered and one uncovered chain in one pass are both compressed, with no orphan results", async () => {
    const s = new SessionBuilder();
    s.user("covered");
    const [ts] = s.turn([{ id: "cv1", name: "bash", output: "one" }]);
    s.reply("ok");
    s.customMessage(CUSTOM_TYPE_SUMMARY, "summary one", { toolCallRefs: [{ shortId: "t1", toolCallId: "cv1", resultTimestamp: ts }], toolNames: ["bash"], turnIndex: 0, timestamp: ts });
    s.chain("uncovered", calls("u", 2));
    const file = s.writeTemp();
    const { result } = await compressFile(file);
    expect(result.compressedEntries.map((e) => e.bodySource ?? "covered")).toEqual(["covered", "deterministic"]);
    expect(result.compressedEntries[1]!.toolRefs).toEqual(["t2", "t3"]);
    const model = await loadSessionModel(file);
    const { messages, diagnostics } = pruneMessages(contextMessages(model.branch), model.state, {});
    expect(diagnostics.filter((d) => d.kind === "orphan-sweep")).toEqual([]);
    expect(messages.filter((m) => m.role === "toolResult")).toEqual([]);
    expect(JSON.stringify(messages)).toContain("summary one");
  });
});

describe("fail-closed backfill", () => {
  it("an index append failure leaves memory unchanged and keeps the no-summary skip", async () => {
    const s = new SessionBuilder();
    s.chain("task", calls("f", 2));
    const file = s.writeTemp();
    const before = fs.readFileSync(file);
    const { model, result } = await compressFile(file, { wrapAppend: failNth(CUSTOM_TYPE_INDEX, 1) });
    expect(result.compressedEntries).toEqual([]);
    expect(result.skipped).toMatchObject([{ reason: "no-summary", failed: true }]);
    expect(model.state.records.size).toBe(0);
    expect(model.state.keyByRef.size).toBe(0);
    expect(model.state.chains.size).toBe(0);
    expect(fs.readFileSync(file)).toEqual(before);
  });

  it("index appended but chain append failed → restart → retry converges without a duplicate index entry", async () => {
    const s = new SessionBuilder();
    s.chain("task", calls("r", 3));
    const file = s.writeTemp();
    const first = await compressFile(file, { wrapAppend: failNth(CUSTOM_TYPE_CHAIN, 1) });
    expect(first.result.compressedEntries).toEqual([]);
    expect(customEntries(file, CUSTOM_TYPE_INDEX)).toHaveLength(1);
    const refsRound1 = customEntries(file, CUSTOM_TYPE_INDEX)[0]!.data.refs.map((r: any) => r.shortId);
    let ran = 0;
    const retry = await compressFile(file, { runner: { workers: 0, run: async () => { ran++; throw new Error("must not run"); }, close: async () => {} } });
    expect(ran).toBe(0);
    expect(retry.result.compressedEntries).toHaveLength(1);
    expect(customEntries(file, CUSTOM_TYPE_INDEX)).toHaveLength(1);
    const chain = customEntries(file, CUSTOM_TYPE_CHAIN)[0]!.data;
    expect(chain.toolRefs).toEqual(refsRound1);
    expect(chain.rangeSummaryText).toContain("Calls: 3");
    expect(chain.rangeSummaryText).toContain(`Refs: ${refsRound1.join(", ")}`);
  });

  it("a genuine span mismatch skips with one backfill-empty diagnostic per chain key", async () => {
    const s = new SessionBuilder();
    const start = s.chain("task", calls("m", 1));
    // A second user message with the same timestamp makes the span unresolvable (fail-closed).
    s.message({ role: "user", content: [{ type: "text", text: "dup" }], timestamp: start });
    s.reply("hi");
    const file = s.writeTemp();
    const run1 = await compressFile(file);
    expect(run1.result.compressedEntries).toEqual([]);
    expect(run1.diagnostics.counters["backfill-empty"]).toBe(1);
    const diag = customEntries(file, CUSTOM_TYPE_DIAGNOSTIC);
    expect(diag.map((d) => d.data)).toEqual([{ kind: "backfill-empty", detail: "middles=1" }]);
    // Same sink again: deduplicated by chain key.
    const run2 = await compressFile(file, { diagnostics: run1.diagnostics });
    expect(run2.result.compressedEntries).toEqual([]);
    expect(customEntries(file, CUSTOM_TYPE_DIAGNOSTIC)).toHaveLength(1);
  });

  it("a fully protected chain is skipped without a diagnostic", async () => {
    const s = new SessionBuilder();
    s.chain("todo", [{ id: "p1", name: "todowrite", args: {}, output: "todo list" }]);
    const file = s.writeTemp();
    const { result, diagnostics } = await compressFile(file, { protectedTools: ["todowrite"] });
    expect(result.compressedEntries).toEqual([]);
    expect(result.skipped).toMatchObject([{ reason: "no-summary" }]);
    expect(result.skipped[0]!.failed).toBeUndefined();
    expect(diagnostics.counters["backfill-empty"]).toBe(0);
    expect(customEntries(file, CUSTOM_TYPE_DIAGNOSTIC)).toEqual([]);
  });

  it("a worker that throws or exits costs only its chain, and the next run heals it", async () => {
    const s = new SessionBuilder();
    const starts = ["a", "b", "c"].map((p) => s.chain(`task ${p}`, calls(p, 2)));
    const file = s.writeTemp();
    for (const fault of ["throw", "exit"] as const) {
      const copy = file.replace(/session\.jsonl$/, `${fault}.jsonl`);
      fs.copyFileSync(file, copy);
      const { result } = await compressFile(copy, { workers: 1, faultFor: (c) => (c.startUserTimestamp === starts[1] ? fault : undefined) });
      expect(result.compressedEntries.map((e) => e.startUserTimestamp)).toEqual([starts[0], starts[2]]);
      expect(result.skipped).toMatchObject([{ startUserTimestamp: starts[1], reason: "no-summary" }]);
      const healed = await compressFile(copy, { workers: 1 });
      expect(healed.result.compressedEntries.map((e) => e.startUserTimestamp)).toEqual([starts[1]]);
    }
  });

  it("a worker that never answers is stopped at its deadline: the run ends, only its chain is lost, the pool keeps serving", async () => {
    const s = new SessionBuilder();
    const starts = ["a", "b", "c"].map((p) => s.chain(`task ${p}`, calls(p, 2)));
    const file = s.writeTemp();
    const runner = createChainRunner(1, { deadlineMs: () => 1_500 });
    try {
      const started = Date.now();
      const { result } = await compressFile(file, { runner, faultFor: (c) => (c.startUserTimestamp === starts[1] ? "hang" : undefined) });
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(result.compressedEntries.map((e) => e.startUserTimestamp)).toEqual([starts[0], starts[2]]);
      expect(result.skipped).toMatchObject([{ startUserTimestamp: starts[1], reason: "no-summary", failed: true }]);
      expect(result.skipped[0]!.cause).toContain("deadline");
      const healed = await compressFile(file, { runner });
      expect(healed.result.compressedEntries.map((e) => e.startUserTimestamp)).toEqual([starts[1]]);
    } finally {
      await runner.close();
    }
  });

  it("repeated worker exits never stall a run", async () => {
    const s = new SessionBuilder();
    const starts = Array.from({ length: 6 }, (_, i) => s.chain(`task ${i}`, calls(`x${i}`, 2)));
    const file = s.writeTemp();
    const runner = createChainRunner(2);
    try {
      const { result } = await compressFile(file, { runner, faultFor: (c) => (starts.indexOf(c.startUserTimestamp) % 2 === 0 ? "exit" : undefined) });
      expect(result.compressedEntries.map((e) => e.startUserTimestamp)).toEqual([starts[1], starts[3], starts[5]]);
      expect(result.skipped.filter((skip) => skip.failed)).toHaveLength(3);
    } finally {
      await runner.close();
    }
  });
});

describe("dedup and protection", () => {
  it("backfills a fully deduped chain; its alias keeps resolving", async () => {
    // Long enough that compressing the chain shrinks the context (core/chain-shrink.ts).
    const SAME_OUTPUT = "same output\n".repeat(100);
    const s = new SessionBuilder();
    s.user("first");
    const [origTs] = s.turn([{ id: "o1", name: "bash", output: SAME_OUTPUT }]);
    s.reply("ok");
    s.customMessage(CUSTOM_TYPE_SUMMARY, "summary", { toolCallRefs: [{ shortId: "t1", toolCallId: "o1", resultTimestamp: origTs }], toolNames: ["bash"], turnIndex: 0, timestamp: origTs });
    s.custom(CUSTOM_TYPE_INDEX, { toolCalls: [{ toolCallId: "o1", toolName: "bash", args: {}, resultText: SAME_OUTPUT, isError: false, turnIndex: 0, timestamp: origTs, resultTimestamp: origTs }] });
    s.user("second");
    const [dupTs] = s.turn([{ id: "d1", name: "bash", output: SAME_OUTPUT }]);
    s.reply("ok");
    s.custom("context-prune-dedup-alias", { newToolCallId: "d1", originalToolCallId: "o1", newResultTimestamp: dupTs, originalResultTimestamp: origTs });
    const file = s.writeTemp();
    const before = await loadSessionModel(file);
    expect(before.state.refByKey.get(`d1@${dupTs}`)).toBe("t1");
    const { result, model } = await compressFile(file);
    const deterministic = result.compressedEntries.find((e) => e.bodySource === "deterministic")!;
    expect(deterministic.droppedToolCallIds).toEqual(["d1"]);
    expect(customEntries(file, CUSTOM_TYPE_INDEX).at(-1)!.data.toolCalls.map((r: any) => r.toolCallId)).toEqual(["d1"]);
    expect(findRecords(model.state, "d1").map((m) => m.record.resultText)).toEqual([SAME_OUTPUT]);
    expect([...model.state.dedupCanonicals().values()]).toEqual([`o1@${origTs}`]);
  });

  it("excludes a protected member from records and refs and relocates it verbatim", async () => {
    const s = new SessionBuilder();
    s.chain("plan", [
      { id: "x1", name: "bash", args: { command: "ls" }, output: "files" },
      { id: "x2", name: "todowrite", args: { todos: [] }, output: "TODO: keep me" },
      { id: "x3", name: "read", args: { path: "a/skills/s/SKILL.md" }, output: "skill text" },
    ]);
    const file = s.writeTemp();
    const { result } = await compressFile(file, { protectedTools: ["todowrite"] });
    const entry = result.compressedEntries[0]!;
    expect(entry.protectedToolCallIds).toEqual(["x2", "x3"]);
    expect(customEntries(file, CUSTOM_TYPE_INDEX)[0]!.data.toolCalls.map((r: any) => r.toolCallId)).toEqual(["x1"]);
    expect(entry.toolRefs).toEqual(["t1"]);
    const model = await loadSessionModel(file);
    const rendered = pruneMessages(contextMessages(model.branch), model.state, {}).messages;
    const text = (rendered[1] as any).content[0].text as string;
    expect(text).toContain('<protected-output tool="todowrite">\nTODO: keep me\n</protected-output>');
    expect(text).toContain('<protected-output tool="read">\nskill text\n</protected-output>');
  });
});

describe("spill", () => {
  it("writes an oversized output to its spill file and never inlines it in the session", async () => {
    const big = Array.from({ length: 9000 }, (_, i) => `row ${i} ✓ naïve`).join("\n");
    const s = new SessionBuilder();
    s.chain("big", [{ id: "big/../1", name: "bash", args: { command: "cat big" }, output: big }, { id: "s1", name: "bash", output: "small" }]);
    const file = s.writeTemp();
    const { result } = await compressFile(file);
    expect(result.stats.spilledFiles).toBe(1);
    const record = customEntries(file, CUSTOM_TYPE_INDEX)[0]!.data.toolCalls[0];
    expect(record.resultText).toBe("");
    expect(record.spillBytes).toBe(Buffer.byteLength(big));
    expect(Object.keys(record).slice(8)).toEqual(["spillBytes", "resultPreview", "spillPath", "contentHash", "spillDigest"]);
    expect(Buffer.byteLength(record.resultPreview)).toBeLessThanOrEqual(2048);
    expect(big.startsWith(record.resultPreview)).toBe(true);
    expect(fs.readFileSync(record.spillPath, "utf8")).toBe(big);
    const model = await loadSessionModel(file);
    expect(record.spillPath.startsWith(model.blobDir + "/")).toBe(true);
    // The original toolResult line stays; no appended entry carries the body (or a long piece of it).
    const appended = fs.readFileSync(file, "utf8").trim().split("\n").slice(s.lines.length).join("\n");
    expect(appended).toContain("row 100 ✓ naïve");
    expect(appended).not.toContain("row 4500 ✓ naïve");
  });
});

describe("legacy entries", () => {
  it("pre-feature index, summary and chain entries load with their old meaning", async () => {
    const s = new SessionBuilder();
    s.user("old");
    const [ts] = s.turn([{ id: "l1", name: "bash", output: "legacy" }]);
    const fin = s.reply("ok");
    s.customMessage(CUSTOM_TYPE_SUMMARY, "legacy summary", { toolCallIds: ["l1"], toolNames: ["bash"], turnIndex: 0, timestamp: ts });
    s.custom(CUSTOM_TYPE_INDEX, { toolCalls: [{ toolCallId: "l1", toolName: "bash", args: {}, resultText: "legacy", isError: false, turnIndex: 0, timestamp: ts }] });
    s.custom(CUSTOM_TYPE_CHAIN, { blockId: "b4", startUserTimestamp: ts - 20, droppedToolCallIds: ["l1"], finalAssistantTimestamp: fin, toolRefs: [], compressedAt: fin + 1 });
    const file = s.writeTemp();
    const { state } = await loadSessionModel(file);
    expect(state.records.has("l1")).toBe(true);
    expect(state.keyByRef.size).toBe(0);
    expect(state.hasSummaryCovering(["l1"])).toBe(true);
    expect(state.dedupCanonicals().size).toBe(1);
    expect(state.chains.get(ts - 20)!.bodySource).toBeUndefined();
    expect(state.reserveBlockId()).toBe("b5");
  });
});
