// SpanIndex.resolve against UPSTREAM-FORMAT.md §4.4 (resolveRange): null when final is null;
// role-gated boundary match (user for start, assistant for final; other roles never match);
// exactly one of each; start index < end index. Plus the O(1)-per-lookup contract of span-index.ts
// (the index is built once at construction; resolve never reads the message array).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SpanIndex } from "../src/core/span-index.js";
import type { AgentMessage } from "../src/core/session-types.js";
import { assistantCalls, assistantText, closedChain, toolResult, user } from "./helpers/messages.js";

describe("SpanIndex.resolve", () => {
  it("resolves unique role-gated boundaries to their indexes", () => {
    const msgs = [user("pre", 1), ...closedChain(1000, [{ id: "a" }, { id: "b" }])];
    // closedChain: user@1000 (idx 1), call@1001, res@1002, call@1003, res@1004, text@1005 (idx 6)
    expect(new SpanIndex(msgs).resolve({ startUserTimestamp: 1000, finalAssistantTimestamp: 1005 })).toEqual({ startIndex: 1, endIndex: 6 });
  });

  it("null when finalAssistantTimestamp is null (interrupted chain)", () => {
    const msgs = closedChain(1000, [{ id: "a" }]);
    expect(new SpanIndex(msgs).resolve({ startUserTimestamp: 1000, finalAssistantTimestamp: null })).toBeNull();
  });

  it("null on a duplicate start timestamp (two user messages share it)", () => {
    const msgs = [user("dup", 1000), ...closedChain(1000, [{ id: "a" }])];
    expect(new SpanIndex(msgs).resolve({ startUserTimestamp: 1000, finalAssistantTimestamp: 1003 })).toBeNull();
  });

  it("null on a duplicate final timestamp (two assistant messages share it)", () => {
    const msgs = [...closedChain(1000, [{ id: "a" }]), assistantText("again", 1003)];
    expect(new SpanIndex(msgs).resolve({ startUserTimestamp: 1000, finalAssistantTimestamp: 1003 })).toBeNull();
  });

  it("a duplicate final counts even when the duplicate is a tool-call assistant message", () => {
    const msgs = [...closedChain(1000, [{ id: "a" }]), assistantCalls([{ id: "z", name: "bash" }], 1003)];
    expect(new SpanIndex(msgs).resolve({ startUserTimestamp: 1000, finalAssistantTimestamp: 1003 })).toBeNull();
  });

  it("null when the start boundary is absent", () => {
    const msgs = closedChain(1000, [{ id: "a" }]);
    expect(new SpanIndex(msgs).resolve({ startUserTimestamp: 999, finalAssistantTimestamp: 1003 })).toBeNull();
  });

  it("null when the final boundary is absent", () => {
    const msgs = closedChain(1000, [{ id: "a" }]);
    expect(new SpanIndex(msgs).resolve({ startUserTimestamp: 1000, finalAssistantTimestamp: 4242 })).toBeNull();
  });

  it("null when end precedes start", () => {
    const msgs = [assistantText("early", 10), user("q", 20)];
    expect(new SpanIndex(msgs).resolve({ startUserTimestamp: 20, finalAssistantTimestamp: 10 })).toBeNull();
  });

  it("start and final may carry the same timestamp value (roles are matched separately)", () => {
    // userAt and assistantAt are separate: a user and an assistant both at 7 resolve to 0 → 1.
    const msgs = [user("q", 7), assistantText("a", 7)];
    expect(new SpanIndex(msgs).resolve({ startUserTimestamp: 7, finalAssistantTimestamp: 7 })).toEqual({ startIndex: 0, endIndex: 1 });
  });

  it("ignores a toolResult sharing the final timestamp (only assistants match the final)", () => {
    const msgs = [...closedChain(1000, [{ id: "a" }]), toolResult("late", "bash", "x", 1003)];
    expect(new SpanIndex(msgs).resolve({ startUserTimestamp: 1000, finalAssistantTimestamp: 1003 })).toEqual({ startIndex: 0, endIndex: 3 });
  });

  it("ignores a toolResult / assistant sharing the start timestamp (only users match the start)", () => {
    const msgs = [toolResult("x", "bash", "y", 1000), assistantText("z", 1000), ...closedChain(1000, [{ id: "a" }])];
    expect(new SpanIndex(msgs).resolve({ startUserTimestamp: 1000, finalAssistantTimestamp: 1003 })).toEqual({ startIndex: 2, endIndex: 5 });
  });

  it("a user message sharing the final timestamp does not count as a duplicate final", () => {
    const msgs = [...closedChain(1000, [{ id: "a" }]), user("next", 1003)];
    expect(new SpanIndex(msgs).resolve({ startUserTimestamp: 1000, finalAssistantTimestamp: 1003 })).toEqual({ startIndex: 0, endIndex: 3 });
  });

  it("accepts a minimal {startUserTimestamp, finalAssistantTimestamp} pair (backfill walk)", () => {
    const msgs = closedChain(1000, [{ id: "a" }]);
    const pair = { startUserTimestamp: 1000, finalAssistantTimestamp: 1003 };
    expect(Object.keys(pair)).toEqual(["startUserTimestamp", "finalAssistantTimestamp"]);
    expect(new SpanIndex(msgs).resolve(pair)).toEqual({ startIndex: 0, endIndex: 3 });
  });

  it("accepts a full persisted chain entry object too", () => {
    const msgs = closedChain(1000, [{ id: "a" }]);
    const entry = {
      blockId: "b1",
      startUserTimestamp: 1000,
      droppedToolCallIds: ["a"],
      finalAssistantTimestamp: 1003,
      toolRefs: [],
      compressedAt: 5,
    };
    expect(new SpanIndex(msgs).resolve(entry)).toEqual({ startIndex: 0, endIndex: 3 });
  });

  it("resolves several chains against the same index", () => {
    const msgs = [...closedChain(1000, [{ id: "a" }]), ...closedChain(2000, [{ id: "b" }])];
    const index = new SpanIndex(msgs);
    expect(index.resolve({ startUserTimestamp: 1000, finalAssistantTimestamp: 1003 })).toEqual({ startIndex: 0, endIndex: 3 });
    expect(index.resolve({ startUserTimestamp: 2000, finalAssistantTimestamp: 2003 })).toEqual({ startIndex: 4, endIndex: 7 });
    // Cross-chain pairs also resolve when unique and ordered (the function is purely positional).
    expect(index.resolve({ startUserTimestamp: 1000, finalAssistantTimestamp: 2003 })).toEqual({ startIndex: 0, endIndex: 7 });
  });
});

describe("SpanIndex — O(1) per lookup", () => {
  it("20,000 resolves over 200,000 messages read the message array zero times after construction", () => {
    const CHAINS = 20_000;
    const PER_CHAIN = 10; // user, 4×(call, result), text
    const msgs: AgentMessage[] = [];
    for (let c = 0; c < CHAINS; c++) {
      const base = c * 100;
      msgs.push(user("q", base));
      for (let k = 0; k < 4; k++) {
        msgs.push(assistantCalls([{ id: `c${c}_${k}`, name: "bash" }], base + 1 + 2 * k));
        msgs.push(toolResult(`c${c}_${k}`, "bash", "x", base + 2 + 2 * k));
      }
      msgs.push(assistantText("d", base + 9));
    }
    expect(msgs).toHaveLength(CHAINS * PER_CHAIN);

    let counting = false;
    let reads = 0;
    const proxy = new Proxy(msgs, {
      get(target, prop, receiver) {
        if (counting && (typeof prop === "string" || typeof prop === "symbol")) reads++;
        return Reflect.get(target, prop, receiver);
      },
      has(target, prop) {
        if (counting) reads++;
        return Reflect.has(target, prop);
      },
    });
    counting = true;
    const index = new SpanIndex(proxy);
    // Sanity: the proxy does observe reads (construction walks the array once).
    expect(reads).toBeGreaterThanOrEqual(CHAINS * PER_CHAIN);
    reads = 0;
    let resolved = 0;
    for (let c = 0; c < CHAINS; c++) {
      const span = index.resolve({ startUserTimestamp: c * 100, finalAssistantTimestamp: c * 100 + 9 });
      if (span && span.startIndex === c * PER_CHAIN && span.endIndex === c * PER_CHAIN + 9) resolved++;
    }
    counting = false;
    expect(resolved).toBe(CHAINS);
    expect(reads).toBe(0);
  });
});

describe("an index built for given boundaries", () => {
  /** Messages of random roles whose timestamps collide often (duplicates, NaN, -0 among them). */
  const messagesOf = (shape: Array<[number, number]>): AgentMessage[] =>
    shape.map(([role, t], i) => {
      const timestamp = t === 7 ? Number.NaN : t === 8 ? -0 : t;
      return role === 0 ? user(`u${i}`, timestamp) : role === 1 ? assistantText(`a${i}`, timestamp) : toolResult(`r${i}`, "bash", "out", timestamp);
    });
  const boundaryOf = ([start, final]: [number, number | null]) => ({ startUserTimestamp: start, finalAssistantTimestamp: final });

  it("resolves those boundaries, and any other, exactly as an index of every timestamp", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 9 })), { maxLength: 40 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.option(fc.integer({ min: 0, max: 9 }))), { maxLength: 6 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.option(fc.integer({ min: 0, max: 9 }))), { maxLength: 6 }),
        (shape, given, others) => {
          const messages = messagesOf(shape);
          const full = new SpanIndex(messages);
          const built = new SpanIndex(messages, true, given.map(boundaryOf));
          for (const boundary of [...given, ...others].map(boundaryOf)) expect(built.resolve(boundary)).toEqual(full.resolve(boundary));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("is the same built in steps", () => {
    const messages = [user("pre", 1), ...closedChain(1000, [{ id: "a" }, { id: "b" }])];
    const boundary = { startUserTimestamp: 1000, finalAssistantTimestamp: 1005 };
    const steps = SpanIndex.steps(messages, [boundary]);
    let next = steps.next();
    while (!next.done) next = steps.next();
    expect(next.value.resolve(boundary)).toEqual({ startIndex: 1, endIndex: 6 });
  });
});
