/**
 * Issue 13: archiving the older outputs of a chain that is still open. Policy edges through the
 * pure decision; then the whole step through the real reader, worker task, appender and
 * renderer, on both compaction paths (in-memory msgpack and file slices).
 */

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CUSTOM_TYPE_CHAIN, CUSTOM_TYPE_INDEX } from "../src/core/custom-types.js";
import { decideOpenChain, DEFAULT_OPEN_CHAIN_SETTINGS, type OpenChainSettings, type OpenOutput } from "../src/core/open-chain-policy.js";
import { findRecords } from "../src/core/query.js";
import { pruneMessages } from "../src/core/render/prune-messages.js";
import { contextMessages } from "../src/core/session-tree.js";
import { loadSessionModel } from "../src/main/session-model.js";
import { compressFile } from "./helpers/compress-harness.js";
import { calls, customEntries, readLines, SessionBuilder, type CallSpec } from "./helpers/session-builder.js";

const out = (key: string, tokens: number, status: OpenOutput["status"] = "archivable", stubTokens = 50): OpenOutput => ({ key, tokens, stubTokens, status });
const policy = (over: Partial<OpenChainSettings> = {}): OpenChainSettings => ({ enabled: true, triggerTokens: 1000, keepRecent: 2, minReclaimTokens: 100, ...over });

describe("open-chain policy", () => {
  it("acts only above the trigger, counting unarchived outputs outside the keep window", () => {
    const outputs = [out("a", 600), out("b", 400), out("c", 5000), out("d", 5000)];
    // Outside the window: a + b = 1000 tokens, not above 1000.
    expect(decideOpenChain(outputs, policy()).reason).toBe("below-trigger");
    expect(decideOpenChain(outputs, policy({ triggerTokens: 999 }))).toEqual({ keys: ["a", "b"], reason: "archive", outsideTokens: 1000, reclaimTokens: 900 });
  });

  it("keeps the newest keepRecent outputs whatever their size", () => {
    const outputs = [out("a", 2000), out("b", 2000), out("c", 2000)];
    expect(decideOpenChain(outputs, policy({ keepRecent: 1 })).keys).toEqual(["a", "b"]);
    expect(decideOpenChain(outputs, policy({ keepRecent: 3 })).reason).toBe("below-trigger");
    expect(decideOpenChain(outputs, policy({ keepRecent: 0 })).keys).toEqual(["a", "b", "c"]);
  });

  it("archives nothing when the step would reclaim less than minReclaimTokens", () => {
    // Protected and grace outputs count toward the trigger but can't be reclaimed.
    const outputs = [out("p", 5000, "protected"), out("g", 5000, "grace"), out("a", 120), out("k", 1), out("l", 1)];
    expect(decideOpenChain(outputs, policy())).toEqual({ keys: [], reason: "below-min-reclaim", outsideTokens: 10120, reclaimTokens: 70 });
    expect(decideOpenChain(outputs, policy({ minReclaimTokens: 70 })).keys).toEqual(["a"]);
  });

  it("never takes an output no bigger than its stub, nor one archived already", () => {
    const outputs = [out("tiny", 40), out("done", 9000, "archived"), out("big", 2000), out("k", 1), out("l", 1)];
    const decision = decideOpenChain(outputs, policy());
    expect(decision.keys).toEqual(["big"]);
    expect(decision.outsideTokens).toBe(2040);
  });

  it("does nothing when disabled; defaults are on", () => {
    expect(decideOpenChain([out("a", 1e6), out("b", 1)], policy({ enabled: false, keepRecent: 1 })).reason).toBe("disabled");
    expect(DEFAULT_OPEN_CHAIN_SETTINGS.enabled).toBe(true);
  });
});

const SETTINGS: OpenChainSettings = { enabled: true, triggerTokens: 4000, keepRecent: 5, minReclaimTokens: 1000 };
const SPILL = 6000;

/** A closed chain, then an open one of 30 calls: one protected, one spilled, the rest ~600 tokens. */
function openSession(): { s: SessionBuilder; open: CallSpec[] } {
  const s = new SessionBuilder();
  s.chain("first task", calls("c", 3));
  s.tick(1000);
  s.user("long autonomous run");
  const open = calls("o", 30, 2400);
  open[3] = { id: "o_3", name: "read", args: { path: "/p/skills/x/SKILL.md" }, output: "skill text ".repeat(300) };
  open[7] = { id: "o_7", name: "bash", args: { command: "cat huge.log" }, output: "huge line\n".repeat(800) };
  for (const call of open) s.turn([call]);
  return { s, open };
}

function render(model: Awaited<ReturnType<typeof loadSessionModel>>) {
  return pruneMessages(contextMessages(model.branch), model.state, {}).messages;
}

const resultTexts = (messages: ReturnType<typeof render>) =>
  messages.filter((m) => m.role === "toolResult").map((m) => ((m as any).content[0].text as string));

/** Continue a session file after what was appended to it (pi would write at the new leaf). */
function continueFile(file: string, build: (s: SessionBuilder) => void): void {
  const lines = readLines(file);
  const s = new SessionBuilder();
  s.lines.length = 0;
  (s as any).lastId = lines[lines.length - 1]!.id;
  (s as any).nextEntry = 0x10000;
  s.clock = Math.max(...lines.map((l) => (typeof l.message?.timestamp === "number" ? l.message.timestamp : 0))) + 1000;
  build(s);
  fs.appendFileSync(file, s.toJsonl());
}

/** Appended lines with the fields that legitimately vary (ids, clock, temp folder) masked out. */
function appendedMasked(file: string): string {
  const lines = readLines(file);
  return lines.slice(openSession().s.lines.length).map((entry) => {
    entry.id = entry.parentId = entry.timestamp = "<masked>";
    for (const record of entry.data?.toolCalls ?? []) if (record.spillPath) record.spillPath = path.basename(record.spillPath);
    return JSON.stringify(entry);
  }).join("\n");
}

describe("open chain: archiving the older outputs", () => {
  it("writes one backfilled index entry for the outputs outside the keep window, no chain entry", async () => {
    const { s } = openSession();
    const file = s.writeTemp();
    const { result } = await compressFile(file, { openChains: SETTINGS, spillThreshold: SPILL });
    expect(result.compressedEntries.map((e) => e.blockId)).toEqual(["b1"]);
    expect(customEntries(file, CUSTOM_TYPE_CHAIN)).toHaveLength(1);
    const index = customEntries(file, CUSTOM_TYPE_INDEX)[1]!.data;
    expect(Object.keys(index)).toEqual(["toolCalls", "backfilled", "refs"]);
    const ids = index.toolCalls.map((r: any) => r.toolCallId);
    // 30 outputs, newest 5 kept, o_3 protected.
    expect(ids).toEqual(Array.from({ length: 25 }, (_, i) => `o_${i}`).filter((id) => id !== "o_3"));
    expect(index.refs.map((r: any) => r.shortId)).toEqual(Array.from({ length: 24 }, (_, i) => `t${i + 4}`));
    expect(result.openChain?.decision.reason).toBe("archive");
    const spilled = index.toolCalls.find((r: any) => r.toolCallId === "o_7");
    expect(spilled).toMatchObject({ resultText: "", spillBytes: 8000, turnIndex: -1 });
    expect(fs.readFileSync(spilled.spillPath, "utf8")).toBe("huge line\n".repeat(800));
  });

  it("renders archived outputs as deterministic stubs naming tool, args, size and ref", async () => {
    const { s, open } = openSession();
    const file = s.writeTemp();
    await compressFile(file, { openChains: SETTINGS, spillThreshold: SPILL });
    const model = await loadSessionModel(file);
    const texts = resultTexts(render(model));
    const openTexts = texts.slice(texts.length - 30);
    expect(openTexts[0]).toBe("[Archived output of bash echo o 0 (~600 tokens), ref `t4`: not shown to keep the context small. context_tree_query with ref `t4` returns it verbatim.]");
    expect(openTexts[3]).toBe(open[3]!.output);
    expect(openTexts[7]).toMatch(/^\[Archived output of bash cat huge\.log \(8000 bytes\), ref `t10`: .* It is also in the file .*\.txt\.\]$/);
    expect(openTexts.slice(25)).toEqual(open.slice(25).map((c) => c.output));
    expect(resultTexts(render(await loadSessionModel(file)))).toEqual(texts);
    // Recoverable byte-exact by ref.
    expect(findRecords(model.state, "t5").map((m) => m.record.resultText)).toEqual([open[1]!.output]);
  });

  it("writes the same bytes for both paths and any worker count", async () => {
    const files: string[] = [];
    for (const via of ["memory", "file"] as const) {
      for (const workers of [0, 2]) {
        const file = openSession().s.writeTemp();
        await compressFile(file, { openChains: SETTINGS, spillThreshold: SPILL, path: via, workers });
        files.push(appendedMasked(file));
      }
    }
    expect(new Set(files).size).toBe(1);
  });

  it("appends nothing on a rerun with nothing new, and acts again once enough new output piled up", async () => {
    const { s } = openSession();
    const file = s.writeTemp();
    await compressFile(file, { openChains: SETTINGS, spillThreshold: SPILL });
    const size = fs.statSync(file).size;
    const rerun = await compressFile(file, { openChains: SETTINGS, spillThreshold: SPILL });
    expect(fs.statSync(file).size).toBe(size);
    expect(rerun.result.openChain?.decision.reason).toBe("below-trigger");
    continueFile(file, (c) => {
      for (const call of calls("n", 8, 2400)) c.turn([call]);
    });
    const later = await compressFile(file, { openChains: SETTINGS, spillThreshold: SPILL });
    // The 5 kept before plus 3 new leave the window: 8 × ~600 tokens > 4000.
    expect(later.result.openChain?.decision.keys).toHaveLength(8);
    const indexes = customEntries(file, CUSTOM_TYPE_INDEX);
    expect(indexes[2]!.data.toolCalls.map((r: any) => r.toolCallId)).toEqual(["o_25", "o_26", "o_27", "o_28", "o_29", "n_0", "n_1", "n_2"]);
  });

  it("leaves it alone below the trigger, and when turned off", async () => {
    const { s } = openSession();
    const file = s.writeTemp();
    const size = fs.statSync(file).size;
    const below = await compressFile(file, { openChains: { ...SETTINGS, triggerTokens: 1e6 }, spillThreshold: SPILL });
    expect(below.result.openChain?.decision.reason).toBe("below-trigger");
    const off = await compressFile(file, { openChains: { ...SETTINGS, enabled: false }, spillThreshold: SPILL });
    expect(off.result.openChain?.decision.reason).toBe("disabled");
    // The closed chain was compressed by the first run; the open one never.
    expect(customEntries(file, CUSTOM_TYPE_INDEX)).toHaveLength(1);
    expect(fs.statSync(file).size).toBeGreaterThan(size);
  });

  it("leaves outputs in recovery grace in the context", async () => {
    const { s } = openSession();
    const file = s.writeTemp();
    const model = await loadSessionModel(file);
    const grace = model.messages.filter((m) => m.role === "toolResult" && (m as any).toolCallId === "o_1").map((m) => `o_1@${m.timestamp}`);
    const { result } = await compressFile(file, { openChains: SETTINGS, spillThreshold: SPILL, graceKeys: new Set(grace) });
    expect(result.openChain?.decision.keys).not.toContain(grace[0]);
    expect(result.openChain?.decision.keys).toHaveLength(23);
  });

  it("once the chain closes, composes one chain entry over the already-archived members", async () => {
    const { s } = openSession();
    const file = s.writeTemp();
    await compressFile(file, { openChains: SETTINGS, spillThreshold: SPILL });
    continueFile(file, (c) => {
      for (const call of calls("z", 2, 100)) c.turn([call]);
      c.reply("all done");
    });
    const { result } = await compressFile(file, { openChains: SETTINGS, spillThreshold: SPILL });
    expect(result.compressedEntries.map((e) => e.blockId)).toEqual(["b2"]);
    const chain = customEntries(file, CUSTOM_TYPE_CHAIN)[1]!.data;
    // 32 calls, one protected: 31 archived, 24 by the open step, 7 now; each exactly once.
    expect(chain.toolRefs).toHaveLength(31);
    expect(chain.rangeSummaryText.split("\n")[1]).toBe("Calls: 31");
    const archived = customEntries(file, CUSTOM_TYPE_INDEX).slice(1).flatMap((e) => e.data.toolCalls.map((r: any) => r.toolCallId));
    expect(archived).toHaveLength(31);
    expect(new Set(archived).size).toBe(31);
    const rendered = JSON.stringify(render(await loadSessionModel(file)));
    expect(rendered).toContain('<compressed-chain id=\\"b2\\"');
    expect(rendered).not.toContain("Archived output of");
  });
});
