import { describe, expect, it } from "vitest";
import { chainsToCompact, compactionVisibility } from "../src/core/compaction-visibility.js";
import { detectChains } from "../src/core/detect-chains.js";
import { makeProtectionPredicate } from "../src/core/protection.js";
import type { SessionEntry } from "../src/core/session-types.js";
import { branchMessages } from "../src/core/session-tree.js";

const none = makeProtectionPredicate({ protectedTools: [], protectedPaths: [] });

/** A linear branch: each entry's parent is the previous one. `c<n>` names a closed chain of one call. */
function branch(...parts: Array<string | { compaction: string | undefined }>): SessionEntry[] {
  const entries: SessionEntry[] = [];
  let clock = 1000;
  const add = (entry: Record<string, unknown>): void => {
    const id = `e${entries.length}`;
    entries.push({ ...entry, id, parentId: entries.length === 0 ? null : `e${entries.length - 1}`, timestamp: new Date(clock).toISOString() } as SessionEntry);
  };
  const message = (message: Record<string, unknown>): void => add({ type: "message", message: { ...message, timestamp: (clock += 1000) } });
  for (const part of parts) {
    if (typeof part === "object") add({ type: "compaction", summary: "s", firstKeptEntryId: part.compaction, tokensBefore: 1 });
    else {
      message({ role: "user", content: [{ type: "text", text: part }] });
      message({ role: "assistant", content: [{ type: "toolCall", id: `${part}-call`, name: "bash", arguments: {} }], stopReason: "toolUse" });
      message({ role: "toolResult", toolCallId: `${part}-call`, toolName: "bash", content: [{ type: "text", text: "out" }], isError: false });
      message({ role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop" });
    }
  }
  return entries;
}

function classify(entries: SessionEntry[]): { hidden: number[]; cut: number[]; starts: number[] } {
  const chains = detectChains(branchMessages(entries), none);
  return { ...compactionVisibility(entries, chains), starts: chains.map((c) => c.startUserTimestamp) };
}

describe("compactionVisibility", () => {
  it("without a compaction every chain is visible", () => {
    const result = classify(branch("c1", "c2"));
    expect(result.hidden).toEqual([]);
    expect(result.cut).toEqual([]);
  });

  it("chains wholly before firstKeptEntryId are hidden; later ones stay", () => {
    // c1 = e0..e3, c2 = e4..e7, compaction e8 keeps from e4 (c2's user message).
    const result = classify(branch("c1", "c2", { compaction: "e4" }, "c3"));
    expect(result.hidden).toEqual([result.starts[0]]);
    expect(result.cut).toEqual([]);
  });

  it("a chain the kept boundary cuts through is cut, not hidden", () => {
    // Kept from e6: c2's user message (e4) is gone, its closing reply (e7) is kept.
    const result = classify(branch("c1", "c2", { compaction: "e6" }, "c3"));
    expect(result.hidden).toEqual([result.starts[0]]);
    expect(result.cut).toEqual([result.starts[1]]);
  });

  it("only the latest compaction counts, and an unknown firstKeptEntryId keeps nothing before it (as pi)", () => {
    const twice = classify(branch("c1", { compaction: "e0" }, "c2", { compaction: "e5" }, "c3"));
    expect(twice.hidden).toEqual([twice.starts[0]]);
    const unknown = classify(branch("c1", "c2", { compaction: "nope" }, "c3"));
    expect(unknown.hidden).toEqual(unknown.starts.slice(0, 2));
  });

  it("a compaction that keeps everything hides nothing", () => {
    const result = classify(branch("c1", "c2", { compaction: "e0" }));
    expect(result).toMatchObject({ hidden: [], cut: [] });
  });
});

describe("chainsToCompact", () => {
  const entries = branch("c1", "c2", { compaction: "e6" }, "c3");
  const chains = detectChains(branchMessages(entries), none);
  const visibility = compactionVisibility(entries, chains);

  it("leaves hidden and cut chains out by default", () => {
    expect(chainsToCompact(chains, visibility, false).map((c) => c.startUserTimestamp)).toEqual([chains[2]!.startUserTimestamp]);
  });

  it("with includeCompacted takes the whole hidden chains back, never the cut one", () => {
    expect(chainsToCompact(chains, visibility, true).map((c) => c.startUserTimestamp)).toEqual([chains[0]!.startUserTimestamp, chains[2]!.startUserTimestamp]);
  });
});
