/**
 * Issue 46 end to end on the REAL pi (rpc mode, offline), once per supported build (pi 0.73.1 on
 * Node 20 and pi 1.6.0 on Node 22), with chainpress loaded from dist/: the scripted model reads
 * two PNG files with pi's own `read` (one large enough to be spilled, one kept inline), later
 * text files; the chain is archived; the model asks context_tree_query for the two refs, and the
 * tool result's image parts are the originals, byte for byte, sent on to the model as pi sends a
 * `read` of an image.
 *
 * The mock model accepts images (`input: ["text", "image"]`), so pi's openai-completions provider
 * sends a tool result's images as a user message of `image_url` data URLs after the tool message.
 *
 * Timeline (rolling window 1; spill threshold 32768, so the 40 KB PNG's part is a spill file of
 * its own and the 2 KB one stays in its record):
 *   chain 1: read shot.png, read small.png | chain 2 closes → b1 = c1
 *   chain 2: read notes.txt                 | chain 3 closes → b2 = c2
 *   chain 3: bash echo
 *   look:    context_tree_query [t(shot), t(small)] → text
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { piEnv, writeAgentDir } from "../bench/lib/pi-agent-dir.js";
import { piBuild, PI_VERSIONS } from "../bench/lib/pi-builds.js";
import { startPiRpc, type PiRpc } from "../bench/lib/pi-rpc.js";
import { EXTENSION_ENTRY, ensureBuilt } from "./helpers/pi-build.js";
import { closeCleanly, sessionEntries } from "./helpers/pi-run-end.js";
import { pngBytes } from "./helpers/image-bytes.js";
import { ATTACHED_IMAGES_TEXT, contentText, lastUserTurn, startMockLlm } from "./helpers/pi-mock-llm.mjs";

type OpenAiPart = { type: string; text?: string; image_url?: { url: string } };
type OpenAiMessage = { role: string; content: string | OpenAiPart[]; tool_call_id?: string };
type Step = { text?: string; toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }> };
type LoggedRequest = { n: number; request: { messages: OpenAiMessage[] }; step: Step; error?: string };
type Entry = { type: string; customType?: string; data?: any; message?: any };

/** 320 × 200 with 40,000 bytes of noise: ~54k base64 characters, past the spill threshold. */
const SHOT = pngBytes(320, 200, 40_000, 11);
/** 64 × 48 with 1,500 bytes of noise: ~2k base64 characters, kept in the record. */
const SMALL = pngBytes(64, 48, 1_500, 12);

const read = (p: string): Step => ({ toolCalls: [{ name: "read", arguments: { path: p } }] });

/** The refs of b1 (chain 1's two reads, in order), as the model reads them from `<compressed-chain id="b1" tools="...">`. */
function refsOfFirstBlock(messages: OpenAiMessage[]): string[] {
  for (const message of messages) {
    const match = /^<compressed-chain id="b1" tools="([^"]*)">/.exec(contentText(message.content));
    if (match) return match[1]!.split(",");
  }
  throw new Error("b1 is not in the context");
}

const SCENARIOS: Record<string, (messages: OpenAiMessage[], step: number) => Step> = {
  "chain 1": (_, step) => [read("shot.png"), read("small.png"), { text: "c1 done" }][step]!,
  "chain 2": (_, step) => [read("notes.txt"), { text: "c2 done" }][step]!,
  "chain 3": (_, step) => [{ toolCalls: [{ name: "bash", arguments: { command: "echo filler-3" } }] }, { text: "c3 done" }][step]!,
  look: (messages, step) => (step === 0 ? { toolCalls: [{ name: "context_tree_query", arguments: { toolCallIds: refsOfFirstBlock(messages) } }] } : { text: "seen" }),
};

function script(request: { messages: OpenAiMessage[] }): Step {
  const turn = lastUserTurn(request.messages);
  const key = Object.keys(SCENARIOS).find((k) => turn.text.startsWith(k));
  if (!key) throw new Error(`no scenario for ${JSON.stringify(turn.text)}`);
  return SCENARIOS[key]!(request.messages, turn.step);
}

/** Every image a request sends the model, as the base64 of its data URL, in order. */
function imagesSent(messages: OpenAiMessage[]): string[] {
  return messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((part) => part.type === "image_url")
    .map((part) => {
      const match = /^data:image\/png;base64,(.*)$/s.exec(part.image_url!.url);
      if (!match) throw new Error(`not a PNG data URL: ${part.image_url!.url.slice(0, 60)}`);
      return match[1]!;
    });
}

describe.each(PI_VERSIONS)("images archived and given back on a real pi %s", (version) => {
  let work: string;
  let mock: Awaited<ReturnType<typeof startMockLlm>>;
  let pi: PiRpc | undefined;
  let entries: Entry[];
  const requests = () => mock.requests as LoggedRequest[];
  const requestOf = (prompt: string, step: number) => requests().find((r) => lastUserTurn(r.request.messages).text.startsWith(prompt) && lastUserTurn(r.request.messages).step === step)!;
  const messagesOf = (role: string) => entries.filter((e) => e.type === "message" && e.message.role === role).map((e) => e.message);
  const callOf = (name: string, args: Record<string, unknown>) =>
    messagesOf("assistant").flatMap((m) => m.content).find((c: any) => c.type === "toolCall" && c.name === name && JSON.stringify(c.arguments) === JSON.stringify(args));
  const resultOf = (call: { id: string }) => messagesOf("toolResult").find((m) => m.toolCallId === call.id)!;
  const imagePartsOf = (message: { content: unknown }) => (message.content as Array<{ type: string; data?: string; mimeType?: string }>).filter((part) => part.type === "image");

  beforeAll(async () => {
    const build = piBuild(version);
    ensureBuilt();
    work = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-e2e-image-"));
    mock = await startMockLlm({ script, logFile: path.join(work, "requests.jsonl") });
    writeAgentDir(path.join(work, "agent"), mock.baseUrl, { spillThreshold: 32768, chainCompression: { rollingWindow: 1 } }, ["text", "image"]);
    const proj = path.join(work, "proj");
    fs.mkdirSync(proj);
    fs.writeFileSync(path.join(proj, "shot.png"), SHOT);
    fs.writeFileSync(path.join(proj, "small.png"), SMALL);
    fs.writeFileSync(path.join(proj, "notes.txt"), "notes: nothing to see\n");
    pi = startPiRpc({ build, cwd: proj, env: piEnv(path.join(work, "agent"), work), args: ["-e", EXTENSION_ENTRY] });
    for (const prompt of ["chain 1: look at the screenshots", "chain 2: read the notes", "chain 3: one more command", "look: show me the screenshots again"]) {
      await pi.prompt(prompt);
      // `/pruner status` queues behind the live flush: the chain that closed is compressed.
      await pi.command("/pruner status", /^pruner: on/);
    }
    const sessionFile = ((await pi.send({ type: "get_state" })).data as { sessionFile: string }).sessionFile;
    await closeCleanly(pi, requests());
    pi = undefined;
    entries = sessionEntries(sessionFile);
  }, 90_000);

  afterAll(async () => {
    await pi?.close(5_000);
    await mock?.close();
    if (work && !process.env.KEEP_E2E) fs.rmSync(work, { recursive: true, force: true });
  });

  it("pi's read returned each PNG whole, and the model was sent it while chain 1 ran", () => {
    for (const [file, bytes] of [["shot.png", SHOT], ["small.png", SMALL]] as const) {
      const parts = imagePartsOf(resultOf(callOf("read", { path: file })));
      expect(parts).toEqual([{ type: "image", data: bytes.toString("base64"), mimeType: "image/png" }]);
    }
    expect(imagesSent(requestOf("chain 1", 2).request.messages)).toEqual([SHOT.toString("base64"), SMALL.toString("base64")]);
  });

  it("once chain 1 is compressed the images cost nothing: no later request sends them until the model asks", () => {
    expect(contentText(requestOf("chain 3", 0).request.messages.find((m) => contentText(m.content).startsWith('<compressed-chain id="b1"'))!.content)).toMatch(/^<compressed-chain id="b1" tools="t\d+,t\d+">/);
    for (const prompt of ["chain 3", "look"]) expect(imagesSent(requestOf(prompt, 0).request.messages)).toEqual([]);
  });

  it("the archive keeps the large image in a spill file of its own and the small one in its record", () => {
    const records = entries.filter((e) => e.type === "custom" && e.customType === "context-prune-index").flatMap((e) => e.data.toolCalls);
    const shot = records.find((r: any) => r.toolCallId === callOf("read", { path: "shot.png" }).id);
    const small = records.find((r: any) => r.toolCallId === callOf("read", { path: "small.png" }).id);
    expect(shot.resultText).toBe("Read image file [image/png]");
    expect(shot.parts).toHaveLength(1);
    expect(shot.parts[0]).toMatchObject({ at: 1, kind: "spilled", type: "image", mimeType: "image/png" });
    expect(JSON.parse(fs.readFileSync(shot.parts[0].spillPath, "utf8"))).toEqual({ type: "image", data: SHOT.toString("base64"), mimeType: "image/png" });
    expect(small.parts).toEqual([{ at: 1, kind: "inline", part: { type: "image", data: SMALL.toString("base64"), mimeType: "image/png" } }]);
  });

  it("context_tree_query gives both images back after the text, byte for byte, and pi sends them on to the model", () => {
    const refs = refsOfFirstBlock(requestOf("look", 0).request.messages);
    const answer = resultOf(callOf("context_tree_query", { toolCallIds: refs }));
    const content = answer.content as Array<{ type: string; text?: string }>;
    // The text comes first, the images after it, as pi's read returns an image.
    expect(content[0]!.type).toBe("text");
    expect(content.findIndex((part) => part.type === "image")).toBeGreaterThan(content.findLastIndex((part) => part.type === "text"));
    expect(imagePartsOf(answer)).toEqual([
      { type: "image", data: SHOT.toString("base64"), mimeType: "image/png" },
      { type: "image", data: SMALL.toString("base64"), mimeType: "image/png" },
    ]);
    const sent = requestOf("look", 1).request.messages;
    expect(sent.some((m) => m.role === "user" && contentText(m.content).startsWith(ATTACHED_IMAGES_TEXT))).toBe(true);
    expect(imagesSent(sent)).toEqual([SHOT.toString("base64"), SMALL.toString("base64")]);
  });
});
