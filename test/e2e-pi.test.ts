/**
 * End to end on the REAL pi CLI (rpc mode, offline), once per supported build (pi 0.73.1 on
 * Node 20 and pi 1.6.0 on Node 22, bench/lib/pi-builds.ts), with chainpress loaded from dist/,
 * against a scripted OpenAI-compatible model on 127.0.0.1. Nine closed chains of `read`/`bash`
 * calls on a scratch folder; the model's request log and the session file are the oracles.
 *
 * pi's own read and bash tools cut outputs at 50 KB (2000 lines), so no built-in tool output can
 * reach the 65536-unit default spill threshold: the agent dir's settings lower it to 32768 (which
 * also exercises the deep-merged `chainpress` settings on the real CLI).
 *
 * Timeline (rolling window 3, recovery grace 3):
 *   c1 read alpha + read medium (spills) | c4 closes → b1 = c1
 *   c2 bash marker                        | c5 closes → b2 = c2 (c5 queries t1,t2 of b1)
 *   c3 bash cat big (spills)              | c6 closes → b3 = c3
 *   c4 read beta + bash wc                | c7 closes → b4 = c4
 *   c5 context_tree_query                 | c8 closes → c5 in recovery grace: nothing
 *   c6..c9 small reads/bash               | c9 closes → b5 = c5, b6 = c6
 *   /pruner compact                       → b7..b9 = c7..c9
 *   "final check" request, restart with --session, "after restart" request: same context.
 */

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeAgentDir, piEnv } from "../bench/lib/pi-agent-dir.js";
import { defaultWorkersFor } from "../src/core/settings.js";
import { EXTENSION_ENTRY, ensureBuilt } from "./helpers/pi-build.js";
import { contentText, lastUserTurn, startMockLlm } from "./helpers/pi-mock-llm.mjs";
import { openPiWorkspace, type PiWorkspace } from "./helpers/pi-workspace.js";
import { piContext } from "./helpers/pi-loader.js";
import { piBuild, PI_VERSIONS, type PiBuild } from "../bench/lib/pi-builds.js";
import { piCommand, type PiRpc } from "../bench/lib/pi-rpc.js";

type Step = { text?: string; toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }> };
type OpenAiMessage = { role: string; content: unknown; tool_call_id?: string; tool_calls?: Array<{ id: string; function: { name: string } }> };
type LoggedRequest = { n: number; request: { messages: OpenAiMessage[] }; step: Step; error?: string };

const read = (p: string): Step => ({ toolCalls: [{ name: "read", arguments: { path: p } }] });
const bash = (command: string): Step => ({ toolCalls: [{ name: "bash", arguments: { command } }] });
const done = (text: string): Step => ({ text });

/** Unique strings that only ever occur in a chain's tool OUTPUTS (never in prompts or arguments). */
const MARKERS: Record<number, string> = {
  1: "ALPHA-UNIQUE-0001",
  2: "MARK-C2-42",
  3: "BIG-UNIQUE-LINE",
  4: "BETA-UNIQUE-0004",
  6: "GAMMA-UNIQUE-0006",
  7: "DELTA-UNIQUE-0007",
  8: "MARK-C8-64",
  9: "EPSILON-UNIQUE-0009",
};

/** The refs the model asks for in chain 5: read from b1's `<compressed-chain ... tools="...">`. */
function refsOfFirstBlock(messages: OpenAiMessage[]): string[] {
  for (const message of messages) {
    const match = /^<compressed-chain id="b1" tools="([^"]*)">/.exec(contentText(message.content));
    if (match) return match[1]!.split(",");
  }
  throw new Error("b1 is not in the context");
}

const SCENARIOS: Record<string, Step[] | ((messages: OpenAiMessage[], step: number) => Step)> = {
  "chain 1": [read("alpha.txt"), read("medium.txt"), done("c1 done")],
  "chain 2": [bash("ls && echo MARK-C2-$((6*7)) && seq 1 400"), done("c2 done")],
  "chain 3": [bash("cat big.txt"), done("c3 done")],
  "chain 4": [read("beta.txt"), bash("wc -c alpha.txt beta.txt"), done("c4 done")],
  "chain 5": (messages, step) => (step === 0 ? { toolCalls: [{ name: "context_tree_query", arguments: { toolCallIds: refsOfFirstBlock(messages) } }] } : done("c5 recovered")),
  "chain 6": [bash("cat gamma.txt"), done("c6 done")],
  "chain 7": [read("delta.txt"), done("c7 done")],
  "chain 8": [bash("echo MARK-C8-$((8*8)) && seq 1 400"), done("c8 done")],
  "chain 9": [read("epsilon.txt"), done("c9 done")],
  "final check": [done("final")],
  "after restart": [done("restarted")],
};

function script(request: { messages: OpenAiMessage[] }): Step {
  const turn = lastUserTurn(request.messages);
  const key = Object.keys(SCENARIOS).find((k) => turn.text.startsWith(k));
  if (!key) throw new Error(`no scenario for ${JSON.stringify(turn.text)}`);
  const scenario = SCENARIOS[key]!;
  const step = typeof scenario === "function" ? scenario(request.messages, turn.step) : scenario[turn.step];
  if (!step) throw new Error(`scenario ${key} has no step ${turn.step}`);
  return step;
}

function writeScratch(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const lines = (n: number, make: (i: number) => string) => Array.from({ length: n }, (_, i) => make(i)).join("\n") + "\n";
  fs.writeFileSync(path.join(dir, "alpha.txt"), lines(40, (i) => `${MARKERS[1]} alpha line ${i} \u00e9\u00e8 \u2603`));
  // 1500 lines of 30 chars: ~45 KB, under pi's 50 KB read limit, over the 32 KB spill threshold.
  fs.writeFileSync(path.join(dir, "medium.txt"), lines(1500, (i) => `medium ${String(i).padStart(6, "0")} ${"m".repeat(15)}`));
  // ~100 KB: bash returns its last ~50 KB (still spilled).
  fs.writeFileSync(path.join(dir, "big.txt"), lines(1800, (i) => `${MARKERS[3]} ${String(i).padStart(5, "0")} ${"x".repeat(36)}`));
  // Small files, yet long enough that compressing their chains shrinks the context (a chain that
  // would grow is left as it is: core/chain-shrink.ts).
  fs.writeFileSync(path.join(dir, "beta.txt"), `${MARKERS[4]}\n${lines(60, (i) => `beta line ${i}`)}`);
  fs.writeFileSync(path.join(dir, "gamma.txt"), `${MARKERS[6]}\n${lines(60, (i) => `gamma line ${i}`)}`);
  fs.writeFileSync(path.join(dir, "delta.txt"), `${MARKERS[7]}\n${lines(60, (i) => `delta line ${i}`)}`);
  fs.writeFileSync(path.join(dir, "epsilon.txt"), `${MARKERS[9]}\n${lines(60, (i) => `epsilon line ${i}`)}`);
}

const firstRequestOf = (requests: LoggedRequest[], prompt: string) =>
  requests.find((r) => lastUserTurn(r.request.messages).text.startsWith(prompt) && lastUserTurn(r.request.messages).step === 0)!;

/** Tool-result messages that answer a context_tree_query call (the only place recovered bytes may appear). */
function queryResultIds(messages: OpenAiMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const m of messages) for (const call of m.tool_calls ?? []) if (call.function.name === "context_tree_query") ids.add(call.id);
  return ids;
}

/** Extension errors, and notices above "info" (chainpress reports failures as warnings). */
const problems = (pi: PiRpc) =>
  pi.events.filter((e) => e.type === "extension_error" || (e.type === "extension_ui_request" && e.notifyType !== undefined && e.notifyType !== "info"));

const compressedBlocks = (messages: OpenAiMessage[]) =>
  messages.map((m) => contentText(m.content)).filter((t) => t.startsWith("<compressed-chain")).map((t) => /id="(b\d+)"/.exec(t)![1]!);

describe.each(PI_VERSIONS)("chainpress on a real pi %s (rpc mode, offline)", (version) => {
  let build: PiBuild;
  let space: PiWorkspace;
  let pi: PiRpc | undefined;
  let sessionFile: string;
  const notices: string[] = [];
  const requests = () => space.mock.requests as LoggedRequest[];

  beforeAll(async () => {
    build = piBuild(version);
    ensureBuilt();
    space = await openPiWorkspace({ build, prefix: "chainpress-e2e-", script, chainpress: { spillThreshold: 32768, chainCompression: { rollingWindow: 3 } } });
    writeScratch(space.proj);
  });

  afterAll(async () => {
    await pi?.close(5_000);
    await space?.close();
  });

  const start = (extra: string[] = []) => space.start(extra);

  /** A prompt, then `/pruner status`: it queues behind the live flush, so the flush has finished. */
  async function chain(prompt: string): Promise<string> {
    await pi!.prompt(prompt);
    return pi!.command("/pruner status", /^pruner: on/);
  }

  it("drives nine chains, /pruner compact, and a restart", async () => {
    pi = start();
    for (let k = 1; k <= 9; k++) notices.push(await chain(`chain ${k}: please work`));
    expect(notices[8]).toMatch(/chains: 9 closed, 0 interrupted, 6 compressed/);
    notices.push(await pi.command("/pruner compact", /^pruner: compacted/));
    // The pool's workers read the three chains' lines from pi's session file; pi's thread encoded none.
    expect(await pi.command("/pruner status", /^pruner: on/)).toMatch(/\nlast compact: 3 chains \(3 read from the session file\) in /);
    await pi.prompt("final check");
    sessionFile = ((await pi.send({ type: "get_state" })).data as { sessionFile: string }).sessionFile;
    expect(problems(pi)).toEqual([]);
    expect(await pi.close()).toBe(0);
    pi = start(["--session", sessionFile]);
    await pi.prompt("after restart");
    expect(problems(pi)).toEqual([]);
    expect(await pi.close()).toBe(0);
    pi = undefined;
    expect(requests().filter((r) => r.error)).toEqual([]);
  }, 90_000);

  it("compresses old chains live and /pruner compact compresses the rest", () => {
    expect(notices[9]).toMatch(/^pruner: compacted 3 chains \(b7, b8, b9\), reclaimed ~\d+ tokens$/);
    const final = firstRequestOf(requests(), "final check").request.messages;
    expect(compressedBlocks(final)).toEqual(["b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9"]);
    // Live: each closed chain past the window was compressed before the next prompt's first request.
    const blocksAt = (prompt: string) => compressedBlocks(firstRequestOf(requests(), prompt).request.messages);
    expect(blocksAt("chain 5")).toEqual(["b1"]);
    expect(blocksAt("chain 6")).toEqual(["b1", "b2"]);
    expect(blocksAt("chain 8")).toEqual(["b1", "b2", "b3", "b4"]);
    expect(blocksAt("chain 9")).toEqual(["b1", "b2", "b3", "b4"]); // c5 held back by recovery grace
    const b1 = final.map((m) => contentText(m.content)).find((t) => t.startsWith('<compressed-chain id="b1"'))!;
    expect(b1).toMatch(/^<compressed-chain id="b1" tools="t1,t2">\nDeterministic chain compression/);
    expect(b1).toContain('First: read {"path":"alpha.txt"}');
  });

  it("raw outputs of compressed chains never reach the model again (except through context_tree_query)", () => {
    const all = requests();
    for (const [k, marker] of Object.entries(MARKERS)) {
      const block = `b${k}`;
      const first = all.findIndex((r) => compressedBlocks(r.request.messages).includes(block));
      expect(first, `chain ${k} was compressed`).toBeGreaterThan(0);
      expect(all.slice(0, first).some((r) => JSON.stringify(r.request.messages).includes(marker)), `chain ${k} output was sent before`).toBe(true);
      for (const r of all.slice(first)) {
        const recovered = queryResultIds(r.request.messages);
        const leaks = r.request.messages.filter((m) => contentText(m.content).includes(marker) && !(m.role === "tool" && recovered.has(m.tool_call_id!)));
        expect(leaks, `request ${r.n} still shows chain ${k}'s output`).toEqual([]);
      }
    }
  });

  it("context_tree_query for t1,t2 returns the original bytes, one of them read back from its spill file", () => {
    const entries = fs.readFileSync(sessionFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const toolText = (name: string, pathArg: string) => {
      const call = entries.flatMap((e) => (e.type === "message" && e.message.role === "assistant" ? e.message.content : [])).find((c: any) => c.type === "toolCall" && c.name === name && c.arguments.path === pathArg);
      const result = entries.find((e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolCallId === call.id);
      return contentText(result.message.content);
    };
    const alpha = toolText("read", "alpha.txt");
    const medium = toolText("read", "medium.txt");
    expect(medium.length).toBeGreaterThan(32768);
    const after = requestAfterQuery(requests());
    const recovered = after.request.messages.filter((m) => m.role === "tool" && queryResultIds(after.request.messages).has(m.tool_call_id!));
    expect(recovered).toHaveLength(1);
    const text = contentText(recovered[0]!.content);
    expect(text).toContain(`## toolRef: t1\nTool: read\n`);
    expect(text).toContain(`\n\n${alpha}`);
    expect(text).toContain(`\n\n${medium}`);
    // medium.txt was spilled: its record holds no text, the bytes came from the blob file.
    const index = entries.filter((e) => e.type === "custom" && e.customType === "context-prune-index").flatMap((e) => e.data.toolCalls);
    const mediumRecord = index.find((r: any) => r.args.path === "medium.txt");
    expect(mediumRecord.resultText).toBe("");
    expect(fs.readFileSync(mediumRecord.spillPath, "utf8")).toBe(medium);
    expect(path.dirname(mediumRecord.spillPath)).toBe(path.join(path.dirname(sessionFile), `${entries[0].id}-blobs`));
  });

  it("writes every chain entry after the closing message it refers to", () => {
    const entries = fs.readFileSync(sessionFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const chainEntries = entries.map((e, i) => ({ e, i })).filter(({ e }) => e.type === "custom" && e.customType === "context-prune-chain");
    expect(chainEntries.map(({ e }) => e.data.blockId)).toEqual(["b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9"]);
    for (const { e, i } of chainEntries) {
      const closing = entries.findIndex((x) => x.type === "message" && x.message.role === "assistant" && x.message.timestamp === e.data.finalAssistantTimestamp);
      expect(closing).toBeGreaterThan(0);
      expect(closing).toBeLessThan(i);
    }
  });

  it("renders the same context byte for byte after a restart", () => {
    const before = firstRequestOf(requests(), "final check").request.messages.filter((m) => m.role !== "system");
    const after = firstRequestOf(requests(), "after restart").request.messages.filter((m) => m.role !== "system");
    expect(after.length).toBeGreaterThan(before.length);
    expect(after.slice(0, before.length).map((m) => JSON.stringify(m))).toEqual(before.map((m) => JSON.stringify(m)));
  });

  it("pi's own loader still reads every message of the session file, in order, with chainpress's entries among them", async () => {
    const entries = fs.readFileSync(sessionFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const messages = entries.filter((e) => e.type === "message").map(({ message: m }) => ({
      role: m.role,
      ...(m.role === "toolResult" ? { toolCallId: m.toolCallId } : {}),
      ...(m.role === "assistant" ? { toolCallIds: m.content.filter((c: { type: string }) => c.type === "toolCall").map((c: { id: string }) => c.id) } : {}),
      text: contentText(m.content),
    }));
    expect(messages.filter((m) => m.role === "user")).toHaveLength(11);
    expect(await piContext(build, sessionFile)).toEqual(messages);
  });
});

/** Chain 5's second request: the one that carries the context_tree_query result. */
function requestAfterQuery(requests: LoggedRequest[]): LoggedRequest {
  return requests.find((r) => lastUserTurn(r.request.messages).text.startsWith("chain 5") && lastUserTurn(r.request.messages).step === 1)!;
}

describe.each(PI_VERSIONS)("chainpress as a package of pi %s", (version) => {
  it("loads from the package folder through package.json's pi.extensions", async () => {
    const build = piBuild(version);
    ensureBuilt();
    const space = await openPiWorkspace({ build, prefix: "chainpress-e2e-pkg-", script: () => ({ text: "ok" }) });
    const pi = space.start();
    try {
      const commands = (await pi.send({ type: "get_commands" })).data as { commands: Array<{ name: string; source: string }> };
      expect(commands.commands).toContainEqual(expect.objectContaining({ name: "pruner", source: "extension" }));
      // The default pool leaves pi's thread a core: two workers at most.
      const workers = defaultWorkersFor(os.availableParallelism());
      expect(await pi.command("/pruner status", /^pruner: on/)).toMatch(new RegExp(`^pruner: on \\(window 3, grace 3, workers ${workers}\\)`));
    } finally {
      await pi.close();
      await space.close();
    }
  }, 60_000);
});

describe.each(PI_VERSIONS)("chainpress in print mode on pi %s", (version) => {
  it("finishes the last flush before pi exits (session_shutdown waits for it)", async () => {
    const build = piBuild(version);
    ensureBuilt();
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-e2e-print-"));
    const mock = await startMockLlm({
      script: (request: { messages: OpenAiMessage[] }) => {
        const turn = lastUserTurn(request.messages);
        // Output long enough that compressing the chain shrinks the context.
        return turn.step === 0 ? bash(`echo output-of-${turn.text} && seq 1 400`) : done(`done ${turn.text}`);
      },
    });
    try {
      writeAgentDir(path.join(work, "agent"), mock.baseUrl);
      fs.mkdirSync(path.join(work, "proj"));
      // Five prompts in one print-mode run: c1 is compressed after c4, c2 after c5, right before exit.
      const [bin, prefix] = piCommand(build);
      const args = [...prefix, "-e", EXTENSION_ENTRY, "-p", "c1", "c2", "c3", "c4", "c5"];
      const result = await run(bin, args, path.join(work, "proj"), piEnv(path.join(work, "agent"), work));
      expect(result.code, result.stderr).toBe(0);
      const sessions = path.join(work, "agent", "sessions");
      const file = fs.readdirSync(sessions, { recursive: true }).map(String).find((f) => f.endsWith(".jsonl"))!;
      const entries = fs.readFileSync(path.join(sessions, file), "utf8").trim().split("\n").map((l) => JSON.parse(l));
      expect(entries.filter((e) => e.customType === "context-prune-chain").map((e) => e.data.blockId)).toEqual(["b1", "b2"]);
    } finally {
      await mock.close();
      fs.rmSync(work, { recursive: true, force: true });
    }
  }, 60_000);
});

function run(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    child.on("exit", (code) => resolve({ code, stderr }));
  });
}
