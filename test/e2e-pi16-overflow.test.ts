/**
 * A session in which pi 1.6's OWN overflow recovery wrote the omission (issue 38). A real pi
 * 1.6.0 (rpc mode, offline, chainpress loaded from the checkout) against the scripted model of
 * test/helpers/pi-mock-llm.mjs, which answers ONE request (chain 2's second) with a context
 * overflow: HTTP 400 and OpenAI's `context_length_exceeded` body. pi-ai's openai-completions
 * provider makes that `stopReason: "error"` with errorMessage `400: {"message":"This model's
 * maximum context length is 1000000 tokens. …","code":"context_length_exceeded"}`, which
 * `isContextOverflow` (pi-ai utils/overflow.js) matches (/maximum context length is \d+ tokens/,
 * /context[_ ]length[_ ]exceeded/). pi then (agent-session.js `_checkCompaction`) appends a
 * `context_edit` with `replacement: null` for the failed attempt, compacts ("overflow") and retries.
 *
 * Overflow recovery runs only with pi's compaction enabled, and retries only when that compaction
 * has something to summarise, so the agent dir turns compaction on with `keepRecentTokens` 6000:
 * a short "warmup 0" exchange is what pi summarises, and a long "warmup 1" prompt (~12k tokens by
 * pi's chars/4 estimate) puts the cut at its own user message, so the three tool chains stay in
 * pi's context (chainpress skips chains hidden behind pi's compaction). chainpress's live flush is
 * kept out of the way (rolling window 50): `chainpress compact` does the compressing.
 *
 * Then, with pi stopped: `chainpress render` equals pi 1.6's loader (test/helpers/render-shape.ts,
 * as test/projection-matches-pi.test.ts) and leaves the omitted attempt out; `chainpress compact`
 * compresses chains 1 to 3 (chain 2 closes at its real reply, never at the omitted attempt) and
 * pi's loader sees the same messages afterwards; a restarted pi 1.6 sends the compressed chains
 * and never the attempt.
 *
 * pi 0.73.1 is not run: it has an overflow compact-and-retry too, but it only drops the failed
 * attempt from its in-memory messages and writes no `context_edit` (it knows none), so no session
 * of the kind this test is about comes out of it. Fails (never skips) when pi 1.6.0 is missing.
 */

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { piBuild, type PiBuild } from "../bench/lib/pi-builds.js";
import type { PiRpc, RpcEvent } from "../bench/lib/pi-rpc.js";
import { ensureBuilt, jsonLines, pruneEntries, runCli } from "./helpers/cli-harness.js";
import { piContexts, type PiContextMessage } from "./helpers/pi-loader.js";
import { contentText, lastUserTurn } from "./helpers/pi-mock-llm.mjs";
import { openPiWorkspace, type PiWorkspace } from "./helpers/pi-workspace.js";
import { reduceRendered, renderLines } from "./helpers/render-shape.js";

type Step = { text?: string; toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>; error?: { status: number; body: unknown } };
type OpenAiMessage = { role: string; content: unknown; tool_call_id?: string; tool_calls?: Array<{ id: string; function: { name: string } }> };
type LoggedRequest = { n: number; request: { messages: OpenAiMessage[] }; step: Step; error?: string };
type Entry = Record<string, any>;

const read = (p: string): Step => ({ toolCalls: [{ name: "read", arguments: { path: p } }] });
const bash = (command: string): Step => ({ toolCalls: [{ name: "bash", arguments: { command } }] });
const done = (text: string): Step => ({ text });

/** What OpenAI answers a request over the context window with. */
const OVERFLOW: Step = {
  error: {
    status: 400,
    body: {
      error: {
        message: "This model's maximum context length is 1000000 tokens. However, your messages resulted in 1000321 tokens. Please reduce the length of the messages.",
        type: "invalid_request_error",
        param: "messages",
        code: "context_length_exceeded",
      },
    },
  },
};

/** Strings that only ever occur in a chain's tool outputs. */
const MARKERS = ["ALPHA-UNIQUE-0001", "MARK-C1-42", "BETA-UNIQUE-0002", "GAMMA-UNIQUE-0002", "DELTA-UNIQUE-0003"];
const WARMUP_1 = `warmup 1: ${"filler text ".repeat(4000)}`;

let overflowAnswered = false;
const SCENARIOS: Record<string, (step: number) => Step> = {
  "warmup 0": () => done("w0 ok"),
  "warmup 1": () => done("w1 ok"),
  "chain 1": (step) => [read("alpha.txt"), bash("echo MARK-C1-$((6*7))"), done("c1 done")][step]!,
  // The second request of chain 2 overflows once; pi's retry asks again at the same step (the failed attempt is omitted).
  "chain 2": (step) => (step === 1 && !overflowAnswered ? ((overflowAnswered = true), OVERFLOW) : [bash("cat beta.txt"), read("gamma.txt"), done("c2 done")][step]!),
  "chain 3": (step) => [read("delta.txt"), bash("wc -c alpha.txt delta.txt"), done("c3 done")][step]!,
  "after restart": () => done("restarted"),
};

function script(request: { messages: OpenAiMessage[] }): Step {
  const turn = lastUserTurn(request.messages);
  const key = Object.keys(SCENARIOS).find((k) => turn.text.startsWith(k));
  if (!key) throw new Error(`no scenario for ${JSON.stringify(turn.text.slice(0, 80))}`);
  const step = SCENARIOS[key]!(turn.step);
  if (!step) throw new Error(`scenario ${key} has no step ${turn.step}`);
  return step;
}

function writeScratch(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "alpha.txt"), `${MARKERS[0]}\nalpha\n`);
  fs.writeFileSync(path.join(dir, "beta.txt"), `${MARKERS[2]}\nbeta\n`);
  fs.writeFileSync(path.join(dir, "gamma.txt"), `${MARKERS[3]}\ngamma\n`);
  fs.writeFileSync(path.join(dir, "delta.txt"), `${MARKERS[4]}\ndelta\n`);
}

/** Extension errors, and notices above "info" (chainpress reports failures as warnings). */
const problems = (pi: PiRpc) =>
  pi.events.filter((e) => e.type === "extension_error" || (e.type === "extension_ui_request" && e.notifyType !== undefined && e.notifyType !== "info"));

const compressedBlocks = (messages: OpenAiMessage[]) =>
  messages.map((m) => contentText(m.content)).filter((t) => t.startsWith("<compressed-chain")).map((t) => /id="(b\d+)"/.exec(t)![1]!);

/** An assistant message that says nothing and calls nothing: how the failed attempt would reach the model. */
const emptyAssistants = (messages: OpenAiMessage[]) => messages.filter((m) => m.role === "assistant" && contentText(m.content) === "" && !m.tool_calls?.length);

describe("a session whose omission pi 1.6's own overflow recovery wrote", () => {
  let build: PiBuild;
  let space: PiWorkspace;
  let pi: PiRpc | undefined;
  let sessionFile: string;
  let chain2Events: RpcEvent[];
  /** The failed attempt's entry, and pi 1.6's context before chainpress wrote anything. */
  let failed: Entry;
  let piBefore: PiContextMessage[];
  const requests = () => space.mock.requests as LoggedRequest[];
  const entries = (): Entry[] => jsonLines(sessionFile) as Entry[];

  beforeAll(async () => {
    build = piBuild("1.6.0");
    ensureBuilt();
    space = await openPiWorkspace({ build, prefix: "chainpress-e2e-overflow-", script, chainpress: { chainCompression: { rollingWindow: 50 } } });
    const settingsFile = path.join(space.agent, "settings.json");
    const settings = JSON.parse(fs.readFileSync(settingsFile, "utf8")) as Record<string, unknown>;
    fs.writeFileSync(settingsFile, JSON.stringify({ ...settings, compaction: { enabled: true, keepRecentTokens: 6000 } }, null, 2));
    writeScratch(space.proj);
  });

  afterAll(async () => {
    await pi?.close(5_000);
    await space?.close();
  });

  const start = (extra: string[] = []) => space.start(extra);

  /** A prompt, until pi settles: an overflow ends one agent run and pi's retry starts another. */
  async function prompt(message: string): Promise<RpcEvent[]> {
    const from = pi!.events.length;
    await pi!.send({ type: "prompt", message });
    await pi!.waitFor((e) => e.type === "agent_settled", from, 60_000);
    return pi!.events.slice(from);
  }

  it("pi 1.6 omits the overflowed attempt with a context_edit, compacts and retries", async () => {
    pi = start();
    await prompt("warmup 0");
    await prompt(WARMUP_1);
    await prompt("chain 1: please work");
    chain2Events = await prompt("chain 2: please work");
    await prompt("chain 3: please work");
    sessionFile = ((await pi.send({ type: "get_state" })).data as { sessionFile: string }).sessionFile;
    expect(problems(pi)).toEqual([]);
    expect(await pi.close()).toBe(0);
    pi = undefined;
    expect(requests().filter((r) => r.error)).toEqual([]);
    expect(overflowAnswered).toBe(true);

    const all = entries();
    const edits = all.filter((e) => e.type === "context_edit");
    expect(edits).toHaveLength(1);
    expect(edits[0]!.replacement).toBeNull();
    failed = all.find((e) => e.id === edits[0]!.targetId)!;
    expect(failed.type).toBe("message");
    expect(failed.message).toMatchObject({ role: "assistant", stopReason: "error", content: [] });
    expect(failed.message.errorMessage).toMatch(/^400: .*maximum context length is 1000000 tokens.*context_length_exceeded/);
    // The omission comes first, then pi's overflow compaction; it summarised "warmup 0" only.
    const compactions = all.filter((e) => e.type === "compaction");
    expect(compactions).toHaveLength(1);
    expect(all.indexOf(compactions[0]!)).toBeGreaterThan(all.indexOf(edits[0]!));
    const warmup1 = all.find((e) => e.type === "message" && e.message.role === "user" && contentText(e.message.content).startsWith("warmup 1"))!;
    expect(compactions[0]!.firstKeptEntryId).toBe(warmup1.id);
    expect(chain2Events.filter((e) => e.type === "compaction_end").map((e) => ({ reason: e.reason, willRetry: e.willRetry, errorMessage: e.errorMessage }))).toEqual([
      { reason: "overflow", willRetry: true, errorMessage: undefined },
    ]);
    // The retry asked again at chain 2's second step, without the attempt, and the chain went on.
    const overflowAt = requests().findIndex((r) => r.step === OVERFLOW);
    const retry = requests().slice(overflowAt + 1).find((r) => r.request.messages.length > 0 && (r.request as { tools?: unknown[] }).tools?.length)!;
    expect(lastUserTurn(retry.request.messages)).toMatchObject({ step: 1 });
    expect(lastUserTurn(retry.request.messages).text).toMatch(/^chain 2/);
    for (const r of requests().slice(overflowAt + 1)) expect(emptyAssistants(r.request.messages), `request ${r.n}`).toEqual([]);
  }, 120_000);

  it("chainpress render is pi 1.6's context, without the omitted attempt", async () => {
    const render = runCli(["render", sessionFile]);
    expect(render.status, render.stderr).toBe(0);
    const lines = renderLines(render.out);
    piBefore = (await piContexts(build, [sessionFile]))[0]!;
    expect(lines.map(reduceRendered)).toEqual(piBefore);
    expect(piBefore.filter((m) => m.role === "user").map((m) => m.text.slice(0, 9))).toEqual(["warmup 1:", "chain 1: ", "chain 2: ", "chain 3: "]);
    expect(lines.filter((m) => m.stopReason === "error" || (m.role === "assistant" && m.timestamp === failed.message.timestamp))).toEqual([]);
  }, 60_000);

  it("chainpress compact compresses every chain, none closed at the omitted attempt; pi 1.6 sees the same messages", async () => {
    const run = runCli(["compact", sessionFile, "--force", "--workers", "0"]);
    expect(run.status, run.stderr).toBe(0);
    const all = entries();
    const closingText = (timestamp: number) =>
      contentText(all.find((e) => e.type === "message" && e.message.role === "assistant" && e.message.timestamp === timestamp)?.message.content);
    const chains = pruneEntries(sessionFile).filter((e) => e.customType === "context-prune-chain");
    expect(chains.map((e) => e.data.blockId)).toEqual(["b1", "b2", "b3"]);
    expect(chains.map((e) => e.data.finalAssistantTimestamp)).not.toContain(failed.message.timestamp);
    expect(chains.map((e) => closingText(e.data.finalAssistantTimestamp as number))).toEqual(["c1 done", "c2 done", "c3 done"]);
    const [after] = await piContexts(build, [sessionFile]);
    expect(after).toEqual(piBefore);
  }, 60_000);

  it("a restarted pi 1.6 sends the compressed chains and never the omitted attempt", async () => {
    pi = start(["--session", sessionFile]);
    await prompt("after restart");
    expect(problems(pi)).toEqual([]);
    expect(await pi.close()).toBe(0);
    pi = undefined;
    expect(requests().filter((r) => r.error)).toEqual([]);
    const last = requests().at(-1)!.request.messages;
    expect(lastUserTurn(last).text).toBe("after restart");
    expect(compressedBlocks(last)).toEqual(["b1", "b2", "b3"]);
    expect(emptyAssistants(last)).toEqual([]);
    for (const marker of MARKERS) expect(JSON.stringify(last), marker).not.toContain(marker);
  }, 60_000);
});
