// The replay engine's model check (core/replay): the as-run replay of every real session against
// its recorded bill, small constructed sessions with bills computed by hand, and a policy that
// never compresses (pi's contexts rendered by the extension's own code, request by request)
// replaying exactly as run.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CACHE_TTL_1H_MS } from "../src/core/replay/cache-model.js";
import { checkAsRun } from "../src/core/replay/as-run-check.js";
import { stepBetween, type ContextSource, type ContextStep } from "../src/core/replay/policy.js";
import { sentMessages, type Recording } from "../src/core/replay/recording.js";
import { prepareReplay, replay } from "../src/core/replay/replay.js";
import { editsOnBranch } from "../src/core/context-edits.js";
import { PruneState } from "../src/core/prune-state.js";
import { pruneMessages } from "../src/core/render/prune-messages.js";
import { contextMessages } from "../src/core/session-tree.js";
import type { AgentMessage, SessionEntry } from "../src/core/session-types.js";
import { loadReplaySession } from "../src/main/replay-session.js";

const dir = path.join(import.meta.dirname, "..", "fixtures", "real-pi-sessions");
const realSessions = fs.readdirSync(dir).filter((file) => file.endsWith(".jsonl")).sort();
const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;
const rel = (value: number, reference: number): number => (value - reference) / reference;

describe("as-run replay of the real sessions (the model check)", () => {
  for (const name of realSessions) {
    it(`${name}: the bill and its split into cache reads and writes within 2% of the recording; misses listed`, async () => {
      const session = await loadReplaySession(path.join(dir, name));
      const check = checkAsRun(session);
      const byReason = new Map<string, number>();
      for (const miss of check.misses) byReason.set(miss.reason, (byReason.get(miss.reason) ?? 0) + 1);
      const lines = [
        `${name}: ${session.recording.requests.length} requests, recorded $${check.recorded.total.toFixed(2)}, replayed $${check.replayed.total.toFixed(2)} (${pct(check.error)}; reads ${pct(rel(check.replayed.cacheRead, check.recorded.cacheRead))}, writes ${pct(rel(check.replayed.cacheWrite, check.recorded.cacheWrite))}); caches lost after ${session.lostCaches.afterUser.lost} of ${session.lostCaches.afterUser.readable} user prompts (${pct(session.lostCaches.afterUser.share)} of their readable tokens), in ${session.lostCaches.inToolLoop.lost} of ${session.lostCaches.inToolLoop.readable} tool turns`,
        `  without the provider's misses: recorded $${check.modelled.recorded.total.toFixed(2)}, replayed $${check.modelled.replayed.total.toFixed(2)} (${pct(check.modelled.error)})`,
        `  estimated requests: ${session.calibration.estimated.map((e) => `${e.request} ${e.reason}`).join(", ")}`,
        `  misses: ${[...byReason].map(([reason, n]) => `${reason} ×${n}`).join(", ")}`,
        ...check.misses.map((m) => `    #${m.request} ${m.reason} (gap ${Math.round(m.gapSeconds)} s): recorded in/read/write ${m.recorded.input}/${m.recorded.cacheRead}/${m.recorded.cacheWrite} $${m.recorded.cost.toFixed(3)}, replayed ${m.replayed.input}/${Math.round(m.replayed.cacheRead)}/${Math.round(m.replayed.cacheWrite)} $${m.replayed.cost.toFixed(3)}`),
      ];
      console.log(lines.join("\n"));
      // The replay as configured (the session's lost-cache shares as an expectation).
      expect(Math.abs(check.error)).toBeLessThan(0.02);
      expect(Math.abs(rel(check.replayed.cacheRead, check.recorded.cacheRead))).toBeLessThan(0.02);
      expect(Math.abs(rel(check.replayed.cacheWrite, check.recorded.cacheWrite))).toBeLessThan(0.02);
      // Request by request with no cache lost, the requests where the recording did not lose it.
      const { recorded, replayed } = check.modelled;
      expect(Math.abs(check.modelled.error)).toBeLessThan(0.02);
      expect(Math.abs(rel(replayed.cacheRead, recorded.cacheRead))).toBeLessThan(0.02);
      expect(Math.abs(rel(replayed.cacheWrite, recorded.cacheWrite))).toBeLessThan(0.02);
      expect(replayed.output).toBeCloseTo(recorded.output, 9);
      // What the provider's misses leave out is named, never more than they cost on the recording.
      const left = check.misses.filter((m) => m.reason === "provider-miss" || m.reason === "thinking-change");
      expect(left.every((m) => m.recorded.cacheRead < m.replayed.cacheRead)).toBe(true);
      // Prices come from the recording for every component it billed.
      for (const model of session.prices.values()) if (model.model !== "gpt-5.1-codex") expect(model.source).toEqual({ input: "recorded", cacheRead: "recorded", cacheWrite: "recorded", output: "recorded" });
    });
  }
});

describe("a policy that never compresses replays exactly as run", () => {
  for (const name of realSessions) {
    it(`${name}: pi's context of each request, rendered with no chain compressed, gives the as-run figures`, async () => {
      const session = await loadReplaySession(path.join(dir, name));
      const asRun = replay(session, { kind: "as-run" });
      const never = replay(session, { kind: "source", source: neverCompress() });
      expect(never.policy).toBe("never-compress");
      expect(never.requests).toEqual(asRun.requests);
      expect(never.totals).toEqual(asRun.totals);
      expect(never.compressions).toEqual([]);
    });
  }
});

/** Whole contexts, each built from scratch: contextMessages of the branch up to the request, through the render with an empty state. */
function neverCompress(): ContextSource {
  return {
    name: "never-compress",
    *steps(recording: Recording): Iterable<ContextStep> {
      let previous: AgentMessage[] = [];
      for (const request of recording.requests) {
        const upTo = recording.branch.slice(0, request.entryIndex);
        const rendered = pruneMessages(contextMessages(upTo, editsOnBranch(upTo)), new PruneState()).messages;
        const next = sentMessages(rendered);
        yield stepBetween(previous, next);
        previous = next;
      }
    },
  };
}

// ---- constructed sessions ---------------------------------------------------------------------

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
/** $ per token: input 3, cache read 0.3, cache write 3.75, output 15 per million (a model not in the built-in table). */
const P = { input: 3e-6, cacheRead: 0.3e-6, cacheWrite: 3.75e-6, output: 15e-6 };

class Builder {
  readonly entries: SessionEntry[] = [];
  private n = 0;
  constructor(private readonly model = "test-model") {}
  add(type: string, fields: Record<string, unknown>, at: number): SessionEntry {
    const id = `e${++this.n}`;
    const entry = { type, id, parentId: this.entries.at(-1)?.id ?? null, timestamp: new Date(at).toISOString(), ...fields } as SessionEntry;
    this.entries.push(entry);
    return entry;
  }
  user(text: string, at: number): void {
    this.add("message", { message: { role: "user", content: text, timestamp: at } }, at);
  }
  result(callId: string, text: string, at: number): void {
    this.add("message", { message: { role: "toolResult", toolCallId: callId, toolName: "read", content: [{ type: "text", text }], timestamp: at } }, at);
  }
  /** An assistant reply billed with these tokens, its cost at P. */
  reply(at: number, tokens: { input: number; cacheRead: number; cacheWrite: number; output: number }, call?: string, stopReason = call ? "toolUse" : "stop"): void {
    const cost = { input: tokens.input * P.input, cacheRead: tokens.cacheRead * P.cacheRead, cacheWrite: tokens.cacheWrite * P.cacheWrite, output: tokens.output * P.output, total: 0 };
    cost.total = cost.input + cost.cacheRead + cost.cacheWrite + cost.output;
    const content = call ? [{ type: "toolCall", id: call, name: "read", arguments: { path: `${call}.txt` } }] : [{ type: "text", text: "done" }];
    this.add("message", { message: { role: "assistant", content, provider: "anthropic", model: this.model, usage: { ...tokens, totalTokens: 0, cost }, stopReason, timestamp: at } }, at);
  }
}

/**
 * U1 → A1 (reads c1) → T1 → A2, 60 s later → U2 → A3, 10 minutes after A2. Recorded prompts 2,010,
 * 2,500 and 2,630 tokens, as Anthropic bills them with a 10-token uncached tail.
 */
function threeRequests(): SessionEntry[] {
  const b = new Builder();
  b.user("read c1 please", T0);
  b.reply(T0 + 1000, { input: 10, cacheRead: 0, cacheWrite: 2000, output: 100 }, "c1");
  b.result("c1", "x".repeat(1600), T0 + 2000);
  b.reply(T0 + 61_000, { input: 10, cacheRead: 2000, cacheWrite: 490, output: 50 });
  b.user("thanks", T0 + 600_000);
  b.reply(T0 + 661_000, { input: 10, cacheRead: 0, cacheWrite: 2620, output: 20 });
  return b.entries;
}

describe("constructed sessions, bills by hand", () => {
  it("three requests: prompts as recorded, a cold cache after 10 minutes, prices from the recording", () => {
    const session = prepareReplay(threeRequests());
    expect(session.uncachedTail).toBe(10); // the one request that read the cache billed 10 input tokens
    const r = replay(session, { kind: "as-run" });
    expect(r.requests.map((q) => q.promptTokens)).toEqual([2010, 2500, 2630]);
    // A1: no cache yet: input 10, write 2010 − 10 = 2000.               10×3 + 2000×3.75 + 100×15 = 9,030 µ$
    // A2: 60 s later, A1's whole prompt is its prefix: read what A1 cached (2000), input 10,
    //     write 2500 − 2000 − 10 = 490.                                  10×3 + 2000×0.3 + 490×3.75 + 50×15 = 3,217.5 µ$
    // A3: 600 s after A2, past 5 minutes: read 0, input 10, write 2620.  10×3 + 2620×3.75 + 20×15 = 10,155 µ$
    expect(r.requests.map((q) => [q.input, q.cacheRead, q.cacheWrite, q.output])).toEqual([[10, 0, 2000, 100], [10, 2000, 490, 50], [10, 0, 2620, 20]]);
    expect(r.totals.cost.total).toBeCloseTo((9030 + 3217.5 + 10155) / 1e6, 12);
    expect(session.calibration.estimated).toEqual([{ request: 0, reason: "first-request" }]);
    const check = checkAsRun(session);
    expect(check.misses).toEqual([]);
    expect(check.error).toBeCloseTo(0, 12);
    expect(session.prices.get("test-model")!.source).toEqual({ input: "recorded", cacheRead: "recorded", cacheWrite: "recorded", output: "recorded" });
  });

  it("the same under a 1-hour cache: A3 reads A2's cached prompt; writes at Anthropic's 1-hour rate (2× input)", () => {
    const r = replay(prepareReplay(threeRequests()), { kind: "as-run" }, { cacheTtlMs: CACHE_TTL_1H_MS });
    // Writes at 2 × $3 = $6 a million. A1: 10×3 + 2000×6 + 100×15 = 13,530 µ$; A2: 10×3 + 2000×0.3 +
    // 490×6 + 50×15 = 4,320 µ$. A3: A2 cached 2500 − 10 = 2490; read 2490, input 10, write
    // 2630 − 2490 − 10 = 130: 10×3 + 2490×0.3 + 130×6 + 20×15 = 1,857 µ$. Total 19,707 µ$.
    expect(r.requests[2]).toMatchObject({ input: 10, cacheRead: 2490, cacheWrite: 130 });
    expect(r.totals.cost.total).toBeCloseTo(19707 / 1e6, 12);
  });

  it("calibration: A2's growth (490 tokens) is split between A1's reply and T1 by their characters", () => {
    const session = prepareReplay(threeRequests());
    const { table, contexts } = session.recording;
    const [a1, t1] = contexts[1]!.segment.ids.slice(1, 3);
    expect(table.tokensOf(a1!) + table.tokensOf(t1!)).toBeCloseTo(490, 9);
    expect(table.tokensOf(t1!) / table.tokensOf(a1!)).toBeCloseTo(table.charsOf(t1!) / table.charsOf(a1!), 9);
    expect(session.calibration.base + table.tokensOf(contexts[0]!.segment.ids[0]!)).toBe(2010);
  });

  it("a compression that rewrites T1 as a stub: a full rewrite under Anthropic's breakpoints, and its payback", () => {
    const session = prepareReplay(threeRequests());
    const { table } = session.recording;
    const stub: AgentMessage = { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "[archived]" }], timestamp: T0 + 2000 };
    const source: ContextSource = {
      name: "stub-t1",
      *steps(recording) {
        const messages = (k: number): AgentMessage[] => sentMessages(contextMessages(recording.branch.slice(0, recording.requests[k]!.entryIndex)));
        yield { keep: 0, append: messages(0) };
        yield { keep: 1, append: messages(1).slice(1) };
        const [u1, a1, , a2, u2] = messages(2);
        yield { keep: 2, append: [stub, a2!, u2!], compressedChains: 1 };
        void u1;
        void a1;
      },
    };
    const r = replay(session, { kind: "source", source }, { cacheTtlMs: CACHE_TTL_1H_MS });
    const ids = session.recording.contexts[2]!.segment.ids;
    const [u1, a1, t1, a2, u2] = [0, 1, 2, 3, 4].map((k) => table.tokensOf(ids[k]!));
    const s = table.tokensOf(table.idOf(stub));
    expect(s).toBe(Math.ceil(JSON.stringify(stub).length / 4)); // a message not in the recording: pi's estimate
    const base = session.calibration.base;
    // A3's prompt: base + U1 + A1 + stub + A2 + U2. A2 cached its whole prompt, which is no longer
    // a prefix (T1 changed), so only the breakpoint after the system prompt and tools is read:
    // base (2,010 − U1's estimate, over the 1,024-token minimum); input 10; the rest is written.
    const prompt = base + u1! + a1! + s + a2! + u2!;
    expect(r.requests[2]!.promptTokens).toBeCloseTo(prompt, 9);
    expect(base).toBeGreaterThan(1024);
    expect(r.requests[2]).toMatchObject({ input: 10, cacheRead: base });
    expect(r.requests[2]!.cacheWrite).toBeCloseTo(prompt - base - 10, 9);
    // The event: kept U1, A1; replaced T1 by the stub; A2 and U2 are the conversation's growth.
    // Rewrite cost = stub × write (1-hour rate, 2 × input) − T1 × read; saving per later request = (T1 − stub) × read.
    const [event] = r.compressions;
    expect(event).toMatchObject({ request: 2, chains: 1, laterRequests: 0, paidBack: false });
    expect(event!.keptTokens).toBeCloseTo(base + u1! + a1!, 9);
    expect(event!.replacedTokens).toBeCloseTo(t1!, 9);
    expect(event!.rewrittenTokens).toBeCloseTo(s, 9);
    expect(event!.rewriteCost).toBeCloseTo(s * 2 * P.input - t1! * P.cacheRead, 12);
    expect(event!.savingPerRequest).toBeCloseTo((t1! - s) * P.cacheRead, 12);
    expect(event!.paybackRequests).toBe(Math.ceil(event!.rewriteCost / event!.savingPerRequest));
    expect(r.estimatedMessages).toBe(2); // U1 (the first request's, estimated by definition) and the stub
  });

  it("an aborted request that recorded no tokens is billed nothing, and its reply is not sent again", () => {
    const b = new Builder();
    b.user("go", T0);
    b.reply(T0 + 1000, { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 }, undefined, "aborted");
    b.user("go again", T0 + 5000);
    b.reply(T0 + 6000, { input: 10, cacheRead: 0, cacheWrite: 1500, output: 10 });
    const session = prepareReplay(b.entries);
    const r = replay(session, { kind: "as-run" });
    expect(r.requests[0]).toMatchObject({ billed: false, promptTokens: 0, cost: { total: 0 } });
    expect(r.totals.billedRequests).toBe(1);
    // The second request's context: "go", "go again" (the aborted reply is left out as pi-ai does).
    expect(session.recording.contexts[1]!.length).toBe(2);
    // No request read the cache, so the uncached tail is 0: input 0, write 1,510.
    // 1510×3.75 + 10×15 = 5,812.5 µ$
    expect(r.requests[1]).toMatchObject({ input: 0, cacheRead: 0, cacheWrite: 1510 });
    expect(r.totals.cost.total).toBeCloseTo(5812.5 / 1e6, 12);
  });

  it("a session without recorded usage is replayed on estimates, at the built-in list prices", () => {
    const b = new Builder();
    const u1 = { role: "user", content: "list the files", timestamp: T0 };
    b.add("message", { message: u1 }, T0);
    const content = [{ type: "text", text: "a.txt b.txt" }];
    const a1 = { role: "assistant", content, provider: "anthropic", model: "claude-sonnet-4-5", stopReason: "stop", timestamp: T0 + 1000 };
    b.add("message", { message: a1 }, T0 + 1000);
    const session = prepareReplay(b.entries);
    expect(session.calibration).toMatchObject({ base: 0, estimated: [{ request: 0, reason: "no-usage" }] });
    const r = replay(session, { kind: "as-run" });
    // Prompt: U1's JSON characters / 4, rounded up; under Sonnet 4.5's 1,024-token minimum, all input.
    // Output: the reply's content characters / 4. Prices: $3 and $15 a million (the table).
    const prompt = Math.ceil(JSON.stringify(u1).length / 4);
    const output = Math.ceil(JSON.stringify(content).length / 4);
    expect(r.requests[0]).toMatchObject({ promptTokens: prompt, input: prompt, cacheRead: 0, cacheWrite: 0, output });
    expect(r.totals.cost.total).toBeCloseTo(prompt * 3e-6 + output * 15e-6, 12);
    expect(r.estimatedRequests).toBe(1);
    expect(r.prices).toEqual([expect.objectContaining({ model: "claude-sonnet-4-5", source: { input: "table", cacheRead: "table", cacheWrite: "table", output: "table" } })]);
    expect(checkAsRun(session).misses).toEqual([]);
  });

  it("a compaction restarts the context from its summary: only the system prompt and tools could be read, under Opus 4.5's minimum", () => {
    const b = new Builder("claude-opus-4-5");
    b.user("a".repeat(8000), T0);
    b.reply(T0 + 1000, { input: 10, cacheRead: 0, cacheWrite: 5000, output: 10 });
    const kept = b.entries.length;
    b.user("b".repeat(400), T0 + 2000);
    b.reply(T0 + 3000, { input: 10, cacheRead: 5000, cacheWrite: 200, output: 10 });
    b.add("compaction", { summary: "s".repeat(800), firstKeptEntryId: b.entries[kept]!.id, tokensBefore: 5210 }, T0 + 4000);
    b.user("c", T0 + 5000);
    b.reply(T0 + 6000, { input: 10, cacheRead: 0, cacheWrite: 5000, output: 10 });
    const session = prepareReplay(b.entries);
    const r = replay(session, { kind: "as-run" });
    expect(r.requests.map((q) => q.promptTokens)).toEqual([5010, 5210, 5010]);
    expect(session.calibration.estimated).toEqual([{ request: 0, reason: "first-request" }]);
    // The third context: summary, the kept "b…" message and its reply, "c": it shares only the
    // system prompt and tools (base = 5,010 − U1's estimate) with the second, which is under the
    // 4,096 tokens Opus 4.5 caches at least: nothing read; input 10, write 5,000.
    const base = session.calibration.base;
    expect(base).toBeGreaterThan(1024);
    expect(base).toBeLessThan(4096);
    expect(session.prices.get("claude-opus-4-5")!.minCacheTokens).toBe(4096);
    expect(r.requests[2]).toMatchObject({ input: 10, cacheRead: 0, cacheWrite: 5000 });
    expect(checkAsRun(session).misses).toEqual([]);
  });
});
