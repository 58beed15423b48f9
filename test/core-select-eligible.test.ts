// selectEligible / recoveryGraceKeys against UPSTREAM-FORMAT.md §4.2 and the 10 selectEligible
// items of the §10 checklist. Rule: candidates = closed, not-compressed, ≥1 middle id, input order;
// keep candidates.slice(0, max(0, len − K)); THEN drop chains in recovery grace (window first).
import { describe, expect, it } from "vitest";
import { recoveryGraceKeys, selectEligible } from "../src/core/select-eligible.js";
import type { ChainRange } from "../src/core/prune-types.js";
import type { AgentMessage } from "../src/core/session-types.js";
import { assistantCalls, assistantText, toolResult, user } from "./helpers/messages.js";

function chain(start: number, opts: Partial<ChainRange> = {}): ChainRange {
  return {
    startUserTimestamp: start,
    middleToolCallIds: [`c${start}`],
    middleOccurrenceKeys: [`c${start}@${start + 2}`],
    protectedToolCallIds: [],
    finalAssistantTimestamp: start + 3,
    ...opts,
  };
}

const none = () => false;
const starts = (cs: ChainRange[]) => cs.map((c) => c.startUserTimestamp);
const K = 3; // upstream live-flush default rollingWindow

describe("selectEligible — rolling window (§10 checklist)", () => {
  it("empty input → empty output", () => {
    expect(selectEligible([], K, none)).toEqual([]);
  });

  it("chains.length < K → empty", () => {
    expect(selectEligible([chain(1), chain(2)], K, none)).toEqual([]);
  });

  it("chains.length === K → empty", () => {
    expect(selectEligible([chain(1), chain(2), chain(3)], K, none)).toEqual([]);
  });

  it("chains.length === K+1 → only the oldest", () => {
    expect(starts(selectEligible([chain(1), chain(2), chain(3), chain(4)], K, none))).toEqual([1]);
  });

  it("chains.length === K+3 → the 3 oldest, in input order", () => {
    const cs = [10, 20, 30, 40, 50, 60].map((s) => chain(s));
    expect(starts(selectEligible(cs, K, none))).toEqual([10, 20, 30]);
  });

  it("returns the same chain objects (no copies)", () => {
    const c = chain(1);
    expect(selectEligible([c, chain(2)], 1, none)[0]).toBe(c);
  });

  it("open chains are never returned and do not count toward the window", () => {
    const cs = [chain(1), chain(2, { finalAssistantTimestamp: null }), chain(3), chain(4, { finalAssistantTimestamp: null })];
    // Candidates = [1, 3]; K = 1 keeps back 3.
    expect(starts(selectEligible(cs, 1, none))).toEqual([1]);
    expect(starts(selectEligible(cs, 0, none))).toEqual([1, 3]);
  });

  it("already-compressed chains are excluded and don't count toward the window", () => {
    const cs = [chain(1), chain(2), chain(3), chain(4), chain(5)];
    const compressed = (s: number) => s === 1 || s === 2;
    // Non-compressed candidates: 3, 4, 5 → with K=2 only 3 is eligible (not 1 or 2, and 1/2 don't fill the window).
    expect(starts(selectEligible(cs, 2, compressed))).toEqual([3]);
  });

  it("K = 0 → all closed, not-already-compressed chains", () => {
    const cs = [chain(1), chain(2), chain(3)];
    expect(starts(selectEligible(cs, 0, none))).toEqual([1, 2, 3]);
  });

  it("K = 0 with already-compressed → only the not-yet-compressed ones", () => {
    const cs = [chain(1), chain(2), chain(3)];
    expect(starts(selectEligible(cs, 0, (s) => s === 2))).toEqual([1, 3]);
  });

  it("empty-middle chains are never selected and do not consume window slots", () => {
    const empty = (s: number) => chain(s, { middleToolCallIds: [], middleOccurrenceKeys: [] });
    const cs = [chain(1), empty(2), chain(3), empty(4), empty(5)];
    expect(starts(selectEligible(cs, 0, none))).toEqual([1, 3]);
    // K = 1: candidates [1, 3] → [1]. If the empties took slots, nothing would be eligible.
    expect(starts(selectEligible(cs, 1, none))).toEqual([1]);
  });

  it("a chain with middle ids but no occurrence keys (calls without results) is a candidate", () => {
    const cs = [chain(1, { middleOccurrenceKeys: [] })];
    expect(starts(selectEligible(cs, 0, none))).toEqual([1]);
  });

  it("K larger than the candidate count → nothing (max(0, len − K))", () => {
    expect(selectEligible([chain(1), chain(2)], 100, none)).toEqual([]);
  });

  it("K = Infinity keeps everything back: slice(0, max(0, len − ∞)) = slice(0, 0)", () => {
    // Reference formula: len − Infinity = −Infinity → max(0, −Infinity) = 0 → no chain eligible.
    expect(selectEligible([chain(1), chain(2)], Number.POSITIVE_INFINITY, none)).toEqual([]);
  });

  it("fractional K follows slice(0, len − K): K = 1.5 over 4 candidates keeps 2 (slice truncates 2.5 → 2)", () => {
    const cs = [chain(1), chain(2), chain(3), chain(4)];
    expect(starts(selectEligible(cs, 1.5, none))).toEqual([1, 2]);
  });
});

describe("selectEligible — recovery grace", () => {
  it("defers a chain whose occurrence key is in the grace set", () => {
    const cs = [chain(1), chain(10)];
    expect(starts(selectEligible(cs, 0, none, new Set(["c1@3"])))).toEqual([10]);
  });

  it("compresses normally when no grace key matches", () => {
    const cs = [chain(1), chain(10)];
    expect(starts(selectEligible(cs, 0, none, new Set(["zzz@1", "c1@999"])))).toEqual([1, 10]);
  });

  it("a deferred chain does not shift the window (window computed before the grace drop)", () => {
    const cs = [chain(1), chain(2), chain(3), chain(4), chain(5)];
    // K = 2 → window candidates [1, 2, 3]; chain 2 deferred → [1, 3]. Chain 4 must NOT move in.
    expect(starts(selectEligible(cs, 2, none, new Set(["c2@4"])))).toEqual([1, 3]);
  });

  it("a bare-id grace entry matches any occurrence of that id", () => {
    const cs = [chain(1, { middleToolCallIds: ["q"], middleOccurrenceKeys: ["q@50", "q@60"] }), chain(100)];
    expect(starts(selectEligible(cs, 0, none, new Set(["q"])))).toEqual([100]);
  });

  it("a timestamped grace entry matches only that exact occurrence", () => {
    const cs = [chain(1, { middleToolCallIds: ["q"], middleOccurrenceKeys: ["q@50"] })];
    expect(starts(selectEligible(cs, 0, none, new Set(["q@51"])))).toEqual([1]);
  });

  it("falls back to middleToolCallIds when middleOccurrenceKeys is empty", () => {
    const cs = [chain(1, { middleToolCallIds: ["q"], middleOccurrenceKeys: [] }), chain(100)];
    expect(starts(selectEligible(cs, 0, none, new Set(["q"])))).toEqual([100]);
  });

  it("an empty grace set defers nothing", () => {
    const cs = [chain(1)];
    expect(starts(selectEligible(cs, 0, none, new Set()))).toEqual([1]);
  });
});

describe("recoveryGraceKeys", () => {
  const query = (id: string, ts: number) => toolResult(id, "context_tree_query", "recovered", ts);

  // Messages: user(1) … query@12 … user(2) … user(3) … user(4). Age of query@12 = 4 − 1 = 3.
  function session(extraUsersAfter: number): AgentMessage[] {
    const msgs: AgentMessage[] = [user("u1", 10), assistantCalls([{ id: "q1", name: "context_tree_query" }], 11), query("q1", 12), assistantText("ok", 13)];
    for (let i = 0; i < extraUsersAfter; i++) msgs.push(user(`u${i + 2}`, 100 + i));
    return msgs;
  }

  it("a query result after the last user message has age 0 and is in grace", () => {
    expect(recoveryGraceKeys(session(0), 3)).toEqual(new Set(["q1@12"]));
  });

  it("age exactly equal to recoveryGraceTurns is still in grace (≤)", () => {
    expect(recoveryGraceKeys(session(3), 3)).toEqual(new Set(["q1@12"]));
  });

  it("age one more than recoveryGraceTurns is out of grace", () => {
    expect(recoveryGraceKeys(session(4), 3)).toEqual(new Set());
  });

  it("the user message before the result counts as 'at or before' (age uses users up to the result)", () => {
    // users total 2: u1 (before) and u2 (after) → age 1; grace 1 → in.
    expect(recoveryGraceKeys(session(1), 1)).toEqual(new Set(["q1@12"]));
  });

  it("grace ≤ 0 gives an empty set", () => {
    expect(recoveryGraceKeys(session(0), 0)).toEqual(new Set());
    expect(recoveryGraceKeys(session(0), -2)).toEqual(new Set());
  });

  it("only context_tree_query toolResults count", () => {
    const msgs = [user("u", 1), toolResult("b1", "bash", "x", 2), toolResult("r1", "read", "y", 3)];
    expect(recoveryGraceKeys(msgs, 3)).toEqual(new Set());
  });

  it("a query result without a numeric timestamp contributes its bare id", () => {
    const r = query("q9", 0) as unknown as Record<string, unknown>;
    delete r.timestamp;
    expect(recoveryGraceKeys([user("u", 1), r as unknown as AgentMessage], 3)).toEqual(new Set(["q9"]));
  });

  it("end to end: a chain holding a recent recovery result is deferred, older ones still compress", () => {
    const msgs: AgentMessage[] = [
      user("u1", 1000),
      assistantCalls([{ id: "a", name: "bash" }], 1001),
      toolResult("a", "bash", "x", 1002),
      assistantText("d", 1003),
      user("u2", 2000),
      assistantCalls([{ id: "q", name: "context_tree_query" }], 2001),
      query("q", 2002),
      assistantText("d", 2003),
    ];
    const chains = [
      chain(1000, { middleToolCallIds: ["a"], middleOccurrenceKeys: ["a@1002"], finalAssistantTimestamp: 1003 }),
      chain(2000, { middleToolCallIds: ["q"], middleOccurrenceKeys: ["q@2002"], finalAssistantTimestamp: 2003 }),
    ];
    const grace = recoveryGraceKeys(msgs, 3);
    expect(starts(selectEligible(chains, 0, none, grace))).toEqual([1000]);
  });
});
