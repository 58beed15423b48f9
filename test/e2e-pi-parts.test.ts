/**
 * Issue 46's read side end to end on the REAL pi (rpc mode, offline), once per supported build,
 * with chainpress loaded from dist/: pi opens a session whose archive already holds outputs with
 * images (written as chainpress's writer writes them, helpers/parts-session.ts: one inline, one
 * in a part spill file), the scripted model calls context_tree_query with their refs, and the
 * tool result pi persists carries the images after the text, each equal to the original base64
 * byte for byte; the model's next request carries them too (an image-capable model).
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { piEnv, writeAgentDir } from "../bench/lib/pi-agent-dir.js";
import { piBuild, PI_VERSIONS } from "../bench/lib/pi-builds.js";
import { startPiRpc, type PiRpc } from "../bench/lib/pi-rpc.js";
import { imageDataOf, writePartsSession, type PartsSession } from "./helpers/archived-parts-session.js";
import { EXTENSION_ENTRY, ensureBuilt } from "./helpers/pi-build.js";
import { closeCleanly, sessionEntries } from "./helpers/pi-run-end.js";
import { lastUserTurn, startMockLlm } from "./helpers/pi-mock-llm.mjs";

type Step = { text?: string; toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }> };
type LoggedRequest = { n: number; request: { messages: unknown[] }; step: Step; error?: string };
type Entry = { type: string; message?: { role: string; toolCallId?: string; toolName?: string; content: Array<{ type: string; text?: string; data?: string; mimeType?: string }> } };

/**
 * The prompt asks for t1 and t3; the request after the tool call carries the images (pi's
 * openai-completions provider sends a tool result's images in a user message after it).
 */
function script(request: { messages: Array<{ role: string; content: unknown }> }): Step {
  const { text, step } = lastUserTurn(request.messages);
  if (text.startsWith("look")) return step === 0 ? { toolCalls: [{ name: "context_tree_query", arguments: { toolCallIds: ["t1", "t3"] } }] } : { text: "no images came" };
  if (text.startsWith("Attached image")) return { text: "seen" };
  throw new Error(`no scenario for ${JSON.stringify(text)}`);
}

/** The mock model, able to take images: pi sends a text-only model none. */
function allowImages(agentDir: string): void {
  const file = path.join(agentDir, "models.json");
  const models = JSON.parse(fs.readFileSync(file, "utf8"));
  models.providers.mock.models[0].input = ["text", "image"];
  fs.writeFileSync(file, JSON.stringify(models, null, 2));
}

describe.each(PI_VERSIONS)("context_tree_query gives archived images back on a real pi %s", (version) => {
  let work: string;
  let mock: Awaited<ReturnType<typeof startMockLlm>>;
  let pi: PiRpc | undefined;
  let session: PartsSession;
  let entries: Entry[];
  const requests = () => mock.requests as LoggedRequest[];

  beforeAll(async () => {
    ensureBuilt();
    work = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-e2e-parts-"));
    mock = await startMockLlm({ script, logFile: path.join(work, "requests.jsonl") });
    const agentDir = path.join(work, "agent");
    writeAgentDir(agentDir, mock.baseUrl, {});
    allowImages(agentDir);
    const sessions = path.join(work, "sessions");
    fs.mkdirSync(sessions);
    const proj = path.join(work, "proj");
    fs.mkdirSync(proj);
    session = await writePartsSession(sessions, undefined, undefined, proj);
    pi = startPiRpc({ build: piBuild(version), cwd: proj, env: piEnv(agentDir, work), args: ["-e", EXTENSION_ENTRY, "--session", session.file] });
    await pi.prompt("look at the screenshots again");
    await closeCleanly(pi, requests());
    pi = undefined;
    entries = sessionEntries(session.file);
  }, 90_000);

  afterAll(async () => {
    await pi?.close(5_000);
    await mock?.close();
    if (work && !process.env.KEEP_E2E) fs.rmSync(work, { recursive: true, force: true });
  });

  it("the tool result pi persists holds the text, then each image byte for byte", () => {
    const result = entries.find((e) => e.type === "message" && e.message?.role === "toolResult" && e.message.toolName === "context_tree_query")!.message!;
    const [text, ...images] = result.content;
    expect(text!.type).toBe("text");
    expect(text!.text).toContain("- part 1, content[1]: image (image/png, 1280x800, ");
    expect(text!.text).toContain("attached after the text, as image 2 of this result");
    expect(images).toEqual([
      { type: "image", data: imageDataOf(session, "t1")[0], mimeType: "image/png" },
      { type: "image", data: imageDataOf(session, "t3")[0], mimeType: "image/png" },
    ]);
    // t1's image came from its own spill file.
    expect(session.records[0]!.parts![0]!.kind).toBe("spilled");
  });

  it("the model's next request carries both images", () => {
    expect(requests()).toHaveLength(2);
    const sent = JSON.stringify(requests()[1]!.request.messages);
    for (const data of [...imageDataOf(session, "t1"), ...imageDataOf(session, "t3")]) expect(sent).toContain(data);
  });
});
