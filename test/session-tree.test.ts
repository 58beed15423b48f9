// Active branch and model context on hand-made v3 trees, checked against pi's own
// buildSessionContext / SessionManager; broken parent links must never hang.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSessionContext, SessionManager } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { MessageEntry, SessionEntry } from "../src/core/session-types.js";
import { branchMessages, buildBranch, contextMessages, walkBranch, type BranchBreak } from "../src/core/session-tree.js";
import { readSession } from "../src/io/read-session.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

let second = 0;
/** Increasing ISO timestamps, so pi's getTree ordering and ms conversions are meaningful. */
function nextTimestamp(): string {
  second += 1;
  return new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
}

function entry(type: string, id: string, parentId: string | null, fields: Record<string, unknown> = {}): SessionEntry {
  return { type, id, parentId, timestamp: nextTimestamp(), ...fields } as SessionEntry;
}

const user = (id: string, parentId: string | null, text: string) =>
  entry("message", id, parentId, { message: { role: "user", content: [{ type: "text", text }], timestamp: 1_767_225_600_000 + second } });

const assistantCall = (id: string, parentId: string, callId: string) =>
  entry("message", id, parentId, {
    message: {
      role: "assistant",
      content: [{ type: "toolCall", id: callId, name: "read", arguments: { path: "a.txt" } }],
      api: "openai-completions",
      provider: "mock",
      model: "mock-model",
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "toolUse",
      timestamp: 1_767_225_600_000 + second,
    },
  });

const toolResult = (id: string, parentId: string, callId: string, text: string) =>
  entry("message", id, parentId, {
    message: { role: "toolResult", toolCallId: callId, toolName: "read", content: [{ type: "text", text }], isError: false, timestamp: 1_767_225_600_000 + second },
  });

const assistantText = (id: string, parentId: string, text: string) =>
  entry("message", id, parentId, {
    message: { role: "assistant", content: [{ type: "text", text }], provider: "mock", model: "mock-model", stopReason: "stop", timestamp: 1_767_225_600_000 + second },
  });

/** Branching session: an abandoned sibling after u1, then pi's other entry kinds on the active path. */
function branchedSession(): SessionEntry[] {
  return [
    entry("model_change", "m1", null, { provider: "mock", modelId: "mock-model" }),
    entry("thinking_level_change", "t1", "m1", { thinkingLevel: "off" }),
    user("u1", "t1", "inspect"),
    assistantCall("a1", "u1", "call_1"),
    toolResult("r1", "a1", "call_1", "line one\n"),
    assistantText("a2", "r1", "done"),
    user("u2x", "a2", "abandoned question"),
    assistantText("a3x", "u2x", "abandoned answer"),
    entry("branch_summary", "bs1", "a2", { fromId: "u2x", summary: "explored elsewhere", details: {}, fromHook: false }),
    entry("custom_message", "cm1", "bs1", { customType: "demo-note", content: "note", display: true, details: { k: 1 } }),
    entry("label", "lb1", "cm1", { targetId: "a1", label: "checkpoint" }),
    entry("session_info", "si1", "lb1", { name: "demo session" }),
    entry("weird_future_type", "w1", "si1", { payload: [1, 2, 3] }),
    entry("custom", "c1", "w1", { customType: "context-prune-index", data: { n: 1 } }),
    user("u3", "c1", "continue"),
  ];
}

/** Session with a compaction on the active path and another one on an abandoned branch. */
function compactedSession(): SessionEntry[] {
  return [
    user("u1", null, "first"),
    assistantCall("a1", "u1", "call_1"),
    toolResult("r1", "a1", "call_1", "old output"),
    entry("custom_message", "cm0", "r1", { customType: "early", content: [{ type: "text", text: "early" }], display: false }),
    user("u2", "cm0", "second"),
    assistantCall("a2", "u2", "call_2"),
    entry("compaction", "cx", "a2", { summary: "abandoned compaction", firstKeptEntryId: "u1", tokensBefore: 5 }),
    toolResult("r2", "a2", "call_2", "new output"),
    entry("custom_message", "cm1", "r2", { customType: "kept", content: "kept note", display: true }),
    entry("compaction", "c1", "cm1", { summary: "## Goal\nsummary", firstKeptEntryId: "u2", tokensBefore: 1234, details: {}, fromHook: false }),
    entry("branch_summary", "bs-empty", "c1", { fromId: "x", summary: "" }),
    user("u3", "bs-empty", "after compaction"),
    assistantText("a3", "u3", "ok"),
  ];
}

function ids(entries: readonly SessionEntry[]): string[] {
  return entries.map((e) => e.id);
}

async function piView(entries: SessionEntry[]) {
  const dir = mkdtempSync(join(tmpdir(), "chainpress-tree-"));
  dirs.push(dir);
  const file = join(dir, "s.jsonl");
  const header = { type: "session", version: 3, id: "tree-session", timestamp: nextTimestamp(), cwd: "/p" };
  writeFileSync(file, [header, ...entries].map((e) => `${JSON.stringify(e)}\n`).join(""));
  return { loaded: await readSession(file), pi: SessionManager.open(file, dir) };
}

describe("buildBranch and contextMessages vs pi", () => {
  it("branched session: root → leaf skips the abandoned sibling", async () => {
    const entries = branchedSession();
    const branch = buildBranch(entries);
    expect(ids(branch)).toEqual(["m1", "t1", "u1", "a1", "r1", "a2", "bs1", "cm1", "lb1", "si1", "w1", "c1", "u3"]);
    const context = contextMessages(branch);
    expect(context).toEqual(buildSessionContext(entries as never).messages);
    expect(context.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant", "branchSummary", "custom", "user"]);
    expect(context[5]).toEqual({ role: "custom", customType: "demo-note", content: "note", display: true, details: { k: 1 }, timestamp: Date.parse(entries[9]!.timestamp) });
  });

  it("compacted session: summary, kept messages from firstKeptEntryId, later messages", () => {
    const entries = compactedSession();
    const branch = buildBranch(entries);
    expect(ids(branch)).toEqual(["u1", "a1", "r1", "cm0", "u2", "a2", "r2", "cm1", "c1", "bs-empty", "u3", "a3"]);
    const context = contextMessages(branch);
    expect(context).toEqual(buildSessionContext(entries as never).messages);
    expect(context[0]).toEqual({ role: "compactionSummary", summary: "## Goal\nsummary", tokensBefore: 1234, timestamp: Date.parse(entries[9]!.timestamp) });
    expect(context.map((m) => m.role)).toEqual(["compactionSummary", "user", "assistant", "toolResult", "custom", "user", "assistant"]);
  });

  it("compaction whose firstKeptEntryId is not on the branch keeps nothing before it", () => {
    const entries = [user("u1", null, "a"), entry("compaction", "c1", "u1", { summary: "s", firstKeptEntryId: "zzzz", tokensBefore: 1 }), user("u2", "c1", "b")];
    const context = contextMessages(buildBranch(entries));
    expect(context).toEqual(buildSessionContext(entries as never).messages);
    expect(context.map((m) => m.role)).toEqual(["compactionSummary", "user"]);
  });

  it("two compactions on the branch: the last one wins", () => {
    const entries = [
      user("u1", null, "a"),
      entry("compaction", "c1", "u1", { summary: "s1", firstKeptEntryId: "u1", tokensBefore: 1 }),
      user("u2", "c1", "b"),
      entry("compaction", "c2", "u2", { summary: "s2", firstKeptEntryId: "u2", tokensBefore: 2 }),
      user("u3", "c2", "c"),
    ];
    const context = contextMessages(buildBranch(entries));
    expect(context).toEqual(buildSessionContext(entries as never).messages);
    expect(context[0]).toMatchObject({ summary: "s2" });
    expect(context).toHaveLength(3);
  });

  it.each([
    ["branched", branchedSession],
    ["compacted", compactedSession],
  ])("%s session read from a file: same branch and context as pi's SessionManager", async (_name, make) => {
    const { loaded, pi } = await piView(make());
    expect(ids(buildBranch(loaded.entries))).toEqual(ids(pi.getBranch()));
    expect(contextMessages(buildBranch(loaded.entries))).toEqual(pi.buildSessionContext().messages);
  });

  it("returns the entries' own message objects, not copies", () => {
    const entries = compactedSession();
    const branch = buildBranch(entries);
    const fromEntries = branch.filter((e): e is MessageEntry => e.type === "message").map((e) => e.message);
    const messages = branchMessages(branch);
    expect(messages).toHaveLength(fromEntries.length);
    messages.forEach((m, i) => expect(m).toBe(fromEntries[i]));
    const context = contextMessages(branch);
    expect(context.filter((m) => fromEntries.includes(m))).toHaveLength(5);
  });

  it("branchMessages ignores compaction and keeps all message entries of the branch", () => {
    const roles = branchMessages(buildBranch(compactedSession())).map((m) => m.role);
    expect(roles).toEqual(["user", "assistant", "toolResult", "user", "assistant", "toolResult", "user", "assistant"]);
  });
});

describe("broken parent links", () => {
  it("a two-entry cycle stops and is reported", () => {
    const entries = [user("a", "b", "x"), user("b", "a", "y")];
    const problems: BranchBreak[] = [];
    const branch = buildBranch(entries, (p) => problems.push(p));
    expect(ids(branch)).toEqual(["a", "b"]);
    expect(problems).toEqual([{ reason: "cycle", entryId: "a", parentId: "b" }]);
    expect(contextMessages(branch)).toHaveLength(2);
  });

  it("an entry that is its own parent stops", () => {
    const walk = walkBranch([user("r", null, "x"), user("s", "s", "y")]);
    expect(ids(walk.entries)).toEqual(["s"]);
    expect(walk.broken).toEqual({ reason: "cycle", entryId: "s", parentId: "s" });
  });

  it("a long cycle below the leaf stops", () => {
    const ring = Array.from({ length: 1000 }, (_, i) => user(`n${i}`, `n${(i + 999) % 1000}`, "x"));
    const walk = walkBranch([...ring, user("leaf", "n500", "z")]);
    expect(walk.entries).toHaveLength(1001);
    expect(walk.broken?.reason).toBe("cycle");
  });

  it("a missing parent ends the branch there, as in pi", () => {
    const entries = [user("u1", null, "x"), user("u2", "gone", "y"), user("u3", "u2", "z")];
    const walk = walkBranch(entries);
    expect(ids(walk.entries)).toEqual(["u2", "u3"]);
    expect(walk.broken).toEqual({ reason: "missing-parent", entryId: "u2", parentId: "gone" });
    expect(contextMessages(walk.entries)).toEqual(buildSessionContext(entries as never).messages);
  });

  it("duplicate ids resolve to the last entry, as in pi", () => {
    const entries = [user("u1", null, "first"), user("u1", null, "second"), user("u2", "u1", "z")];
    const branch = buildBranch(entries);
    expect(branch[0]).toBe(entries[1]);
    expect(contextMessages(branch)).toEqual(buildSessionContext(entries as never).messages);
  });

  it("an explicit leaf id walks from there; an unknown one gives an empty branch", () => {
    const entries = branchedSession();
    expect(ids(walkBranch(entries, "a3x").entries)).toEqual(["m1", "t1", "u1", "a1", "r1", "a2", "u2x", "a3x"]);
    expect(walkBranch(entries, "nope")).toEqual({ entries: [], indices: [], broken: null });
    expect(buildBranch([])).toEqual([]);
  });
});

describe("the walk that trusts neighbours (unique ids)", () => {
  /** Both walks, from the last entry and from every id: they must agree entry for entry. */
  function sameWalks(entries: SessionEntry[]): void {
    expect(walkBranch(entries, undefined, true)).toEqual(walkBranch(entries, undefined, false));
    for (const { id } of entries) expect(walkBranch(entries, id, true)).toEqual(walkBranch(entries, id, false));
  }

  it("gives the general walk's branch and break on branches, cycles, missing parents and stray headers", () => {
    sameWalks(branchedSession());
    sameWalks(compactedSession());
    sameWalks([user("a", "b", "x"), user("b", "a", "y")]);
    sameWalks([user("r", null, "x"), user("s", "s", "y")]);
    sameWalks([user("u1", null, "x"), user("u2", "gone", "y"), user("u3", "u2", "z")]);
    // A parent written after its child, and a stray header between an entry and its parent.
    sameWalks([user("c", "p", "x"), user("p", null, "y"), user("leaf", "c", "z")]);
    sameWalks([user("u1", null, "x"), entry("session", "h2", null), user("u2", "u1", "y")]);
    const ring = Array.from({ length: 300 }, (_, i) => user(`n${i}`, `n${(i + 299) % 300}`, "x"));
    sameWalks([...ring, user("leaf", "n150", "z")]);
  });

  it("finds a parent far before its child (past the entries it looks at first)", () => {
    const abandoned = Array.from({ length: 6000 }, (_, i) => user(`x${i}`, i === 0 ? "root" : `x${i - 1}`, "x"));
    const entries = [user("root", null, "r"), ...abandoned, user("back", "root", "b"), user("leaf", "back", "z")];
    const walk = walkBranch(entries, undefined, true);
    expect(ids(walk.entries)).toEqual(["root", "back", "leaf"]);
    expect(walk.indices).toEqual([0, 6001, 6002]);
    expect(walk).toEqual(walkBranch(entries, undefined, false));
  });

  it("gives the general walk's result on random trees", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(), fc.boolean(), fc.boolean()), { minLength: 1, maxLength: 40 }), (shape) => {
        // Entry i's parent: mostly the one before, else any entry (before or after), a missing id, or none.
        const entries = shape.map(([pick, adjacent, missing], i) => {
          const parent = i === 0 || pick % 7 === 0 ? null : adjacent ? `e${i - 1}` : missing ? `gone${pick}` : `e${pick % shape.length}`;
          return user(`e${i}`, parent, "t");
        });
        sameWalks(entries);
      }),
    );
  });

  it("is used only when the reader found no id twice", async () => {
    expect((await piView(branchedSession())).loaded.uniqueIds).toBe(true);
    expect((await piView([user("u1", null, "first"), user("u1", null, "second"), user("u2", "u1", "z")])).loaded.uniqueIds).toBe(false);
  });
});
