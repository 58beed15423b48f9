// The "chainpress live" replay policy (main/live-replay-source.ts): on a session played through the
// real extension in pi's real SessionManager, its context for every request is what the
// extension's context handler returned for it, and its compression events are the flushes that
// compressed; on the real sessions it replays and its saving against as-run is printed.
import fs from "node:fs";
import os from "node:os";
import { DEFAULT_SEED, PRESETS } from "../bench/fixtures/presets.js";
import { generateSession } from "../bench/fixtures/generate-session.js";
import path from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import type { ContextStep } from "../src/core/replay/policy.js";
import { prepareReplay, replay, replayEnvironment } from "../src/core/replay/replay.js";
import { mergeSettings } from "../src/core/settings.js";
import type { AgentMessage, SessionEntry } from "../src/core/session-types.js";
import { chainpressLive } from "../src/main/live-replay-source.js";
import { loadReplaySession } from "../src/main/replay-session.js";
import { DetectedChains, flushesAfter } from "../src/main/live-replay-state.js";
import { detectChains } from "../src/core/detect-chains.js";
import { makeProtectionPredicate } from "../src/core/protection.js";
import { branchMessagesSteps } from "../src/core/session-tree.js";
import { DEFAULT_SETTINGS } from "../src/core/settings.js";
import { runSteps } from "../src/core/steps.js";
import { QUERY_TOOL_NAME } from "../src/core/custom-types.js";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";
import { MessageClock, piReply, piResult, piToolCall, piUser } from "./helpers/pi-session.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** Window 1, the flush at each reply, and an open-chain step that fires on a few hundred tokens. */
const SETTINGS = { workers: 0, chainCompression: { rollingWindow: 1, trigger: "each-reply" }, openChains: { triggerTokens: 300, keepRecent: 1, minReclaimTokens: 100 } };
/**
 * The same under `when-it-pays` with a short horizon: some flushes wait for later replies. The
 * cache lives an hour, so the extension (wall-clock time) and the replay (the messages' times)
 * both see it warm throughout.
 */
const PAYS_SETTINGS = { ...SETTINGS, chainCompression: { rollingWindow: 1, trigger: "when-it-pays", paybackRequests: 10, cacheTtlSeconds: 3600 } };

interface Played {
  branch: SessionEntry[];
  /** What the extension's context handler returned before each assistant message, in order. */
  contexts: unknown[][];
  /** Requests before which a flush had written chain entries since the request before. */
  compressedBefore: number[];
}

/**
 * Plays chains through the host as pi does: each assistant message is preceded by a `context`
 * event on the branch so far (its output recorded); a tool turn ends with turn_end (the
 * open-chain step), a text reply with the run's end (the flush). Each step is awaited.
 */
async function play(chains: Array<{ label: string; outputs: string[]; tool?: string }>, settings: Record<string, unknown> = SETTINGS): Promise<Played> {
  const agentDir = tempAgentDir(settings);
  dirs.push(agentDir);
  const host = await PiHost.start(SessionManager.inMemory(), agentDir);
  const clock = new MessageClock();
  const contexts: unknown[][] = [];
  const compressedBefore: number[] = [];
  let chainEntries = 0;
  const request = async (message: object) => {
    const now = host.customEntries("context-prune-chain").length;
    if (now > chainEntries) compressedBefore.push(contexts.length);
    chainEntries = now;
    contexts.push((await host.context()).output);
    await host.message(message);
  };
  for (const { label, outputs, tool = "bash" } of chains) {
    await host.message(piUser(clock, `prompt ${label}`));
    for (const [i, output] of outputs.entries()) {
      const id = `${label}_call_${i}`;
      await request(piToolCall(clock, id, tool, { command: `produce ${label} ${i}` }));
      const result = piResult(clock, id, tool, output);
      await host.message(result);
      await host.emit("turn_end", { type: "turn_end", turnIndex: i, message: undefined, toolResults: [result] });
      await host.idle();
    }
    await request(piReply(clock, `${label} done`));
    await host.endRun();
    await host.idle();
  }
  return { branch: host.sessionManager.getBranch() as unknown as SessionEntry[], contexts, compressedBefore };
}

/** The policy's contexts, rebuilt from its steps. */
function contextsOf(steps: Iterable<ContextStep>): AgentMessage[][] {
  const contexts: AgentMessage[][] = [];
  let context: AgentMessage[] = [];
  for (const step of steps) {
    context = [...context.slice(0, step.keep), ...step.append];
    contexts.push(context);
  }
  return contexts;
}

/** The contexts as JSON values, each compressed chain's message without its timestamp. */
function withoutChainTimes(contexts: unknown[][]): unknown {
  return JSON.parse(JSON.stringify(contexts), (key, value: unknown) => {
    if (value !== null && typeof value === "object" && JSON.stringify(value).startsWith('{"role":"user","content":[{"type":"text","text":"<compressed-chain')) return { ...value, timestamp: "compressedAt" };
    return value;
  });
}

const text = (label: string, n: number) => `${label} `.repeat(n);

const CHAINS = [
  { label: "c1", outputs: [text("alpha", 40), text("beta", 40)] },
      { label: "c2", outputs: [text("gamma", 300), text("delta", 300), text("eps", 300)] },
      { label: "c3", outputs: [text("zeta", 40)] },
      { label: "c4", outputs: [text("eta", 40), text("theta", 40)] },
      // A recovery: its chain waits out the grace (3 user turns) before it is compressed.
      { label: "c5", outputs: [text("iota", 40)], tool: QUERY_TOOL_NAME },
      { label: "c6", outputs: [text("kappa", 40)] },
      { label: "c7", outputs: [text("lambda", 40)] },
      { label: "c8", outputs: [text("mu", 40)] },
  { label: "c9", outputs: [text("nu", 40)] },
];

/** Chains whose outputs outweigh their compressed form, of uneven sizes: some flushes pay back at once, some wait. */
const PAYS_CHAINS = [
  { label: "p1", outputs: [text("alpha", 400), text("beta", 400)] },
  { label: "p2", outputs: [text("gamma", 100)] },
  { label: "p3", outputs: [text("delta", 100)] },
  { label: "p4", outputs: [text("eps", 900), text("zeta", 900)] },
  { label: "p5", outputs: [text("eta", 100)] },
  { label: "p6", outputs: [text("theta", 1200)] },
  { label: "p7", outputs: [text("iota", 100)] },
];

describe("chainpress live on a session played through the extension", () => {
  for (const [name, raw, chains] of [["each reply", SETTINGS, CHAINS], ["when it pays", PAYS_SETTINGS, PAYS_CHAINS]] as const) {
  it(`${name}: gives, for every request, the context the extension's handler returned; counts its compressions`, async () => {
    const played = await play(chains, raw);
    const settings = mergeSettings(raw).settings;
    const session = prepareReplay(played.branch);
    const environment = replayEnvironment(session, settings.chainCompression.cacheTtlSeconds * 1000);
    expect(session.recording.requests.length).toBe(played.contexts.length);
    const live = contextsOf(chainpressLive(settings).steps(session.recording, environment));
    expect(contextsOf(chainpressLive(settings, { renderEveryRequest: true }).steps(session.recording, environment))).toEqual(live);
    // Something happened: chains were compressed and the open chain's older outputs archived.
    expect(played.compressedBefore.length).toBeGreaterThan(1);
    expect(JSON.stringify(played.contexts)).toContain("Archived output of bash");
    // A compressed chain's message carries the flush's wall-clock time (compressedAt), which no
    // provider is sent; the replay puts the closing reply's time there. Compared without it.
    expect(withoutChainTimes(live)).toEqual(withoutChainTimes(played.contexts));
    const result = replay(session, { kind: "source", source: chainpressLive(settings) }, { cacheTtlMs: environment.cacheTtlMs });
    expect(result.policy).toBe("chainpress live");
    expect(result.compressions.map((c) => c.request)).toEqual(played.compressedBefore);
    // At each reply one chain crosses the window; waiting for the saving to pay batches them.
    if (raw === SETTINGS) expect(result.compressions.every((c) => c.chains === 1)).toBe(true);
    else expect(result.compressions.some((c) => c.chains > 1)).toBe(true);
  });
  }
});

const dir = path.join(import.meta.dirname, "..", "fixtures", "real-pi-sessions");
const realSessions = fs.readdirSync(dir).filter((file) => file.endsWith(".jsonl")).sort();
const isProtected = makeProtectionPredicate(DEFAULT_SETTINGS);

describe("chains detected as the branch grows", () => {
  for (const name of realSessions) {
    it(`${name}: at every closing reply, the chains detectChains finds on the whole branch so far`, async () => {
      const session = await loadReplaySession(path.join(dir, name));
      const messages = runSteps(branchMessagesSteps(session.recording.branch));
      const detected = new DetectedChains();
      let checked = 0;
      messages.forEach((message, k) => {
        if (!flushesAfter(message)) return;
        const upTo = messages.slice(0, k + 1);
        expect(detected.upTo(upTo, isProtected)).toEqual(detectChains(upTo, isProtected));
        checked++;
      });
      expect(checked).toBeGreaterThan(10);
    });
  }
});

describe("chainpress live on the real sessions", () => {
  for (const name of realSessions) {
    it(`${name}: replays; its saving against as-run printed`, async () => {
      const session = await loadReplaySession(path.join(dir, name));
      const asRun = replay(session, { kind: "as-run" });
      const live = replay(session, { kind: "source", source: chainpressLive() });
      expect(live.requests.length).toBe(asRun.requests.length);
      const saving = 1 - live.totals.cost.total / asRun.totals.cost.total;
      const paidBack = live.compressions.filter((c) => c.paidBack).length;
      console.log(`${name}: ${asRun.requests.length} requests, as-run $${asRun.totals.cost.total.toFixed(2)}, chainpress live $${live.totals.cost.total.toFixed(2)} (saving ${(100 * saving).toFixed(1)}%), ${live.compressions.length} compressions (${live.compressions.reduce((n, c) => n + c.chains, 0)} chains), ${paidBack} paid back`);
      expect(Number.isFinite(live.totals.cost.total)).toBe(true);
      // The incremental steps give what rendering pi's whole context at every request gives.
      const everyRequest = replay(session, { kind: "source", source: chainpressLive(undefined, { renderEveryRequest: true }) });
      expect(everyRequest.requests).toEqual(live.requests);
      expect(everyRequest.compressions).toEqual(live.compressions);
    });
  }
});

describe("chainpress live on a long open chain", () => {
  it("open-400 (one chain of 400 calls, generated): the open-chain steps' partial renders equal rendering every request whole", async () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-open-400-"));
    dirs.push(scratch);
    const file = path.join(scratch, "open-400.jsonl");
    generateSession(PRESETS["open-400"]!, DEFAULT_SEED, file);
    const session = await loadReplaySession(file);
    const asRun = replay(session, { kind: "as-run" });
    const live = replay(session, { kind: "source", source: chainpressLive() });
    const everyRequest = replay(session, { kind: "source", source: chainpressLive(undefined, { renderEveryRequest: true }) });
    expect(everyRequest.requests).toEqual(live.requests);
    // The steps archived outputs: the last request is far smaller than as run.
    expect(live.requests.at(-1)!.promptTokens).toBeLessThan(asRun.requests.at(-1)!.promptTokens / 2);
  });
});
