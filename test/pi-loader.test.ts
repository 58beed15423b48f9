// test/helpers/pi-loader.ts runs each supported pi build's own session loader (pi 1.6.0 on its
// Node 22, in a child process). Here: both builds read the real sessions in fixtures/ (version 1
// files, migrated on a copy) as the same messages; the 0.73.1 child agrees with pi 0.73.1 loaded
// in this process; and a session with context_edit entries shows that the 1.6.0 child really
// applies pi 1.6's projection, which 0.73.1 knows nothing of.

import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { piBuild, PI_VERSIONS } from "../bench/lib/pi-builds.js";
import { removeTempDirs, tempDir } from "./helpers/cli-harness.js";
import { REAL_SESSIONS_DIR } from "./helpers/fixture-paths.js";
import { piContext, piContexts, type PiContextMessage } from "./helpers/pi-loader.js";

const FIXTURES = fs.readdirSync(REAL_SESSIONS_DIR).filter((f) => f.endsWith(".jsonl")).sort().map((f) => path.join(REAL_SESSIONS_DIR, f));
const digest = (file: string) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");

afterAll(removeTempDirs);

describe("pi's own loader, per build, on the real sessions in fixtures/", () => {
  const contexts = new Map<string, PiContextMessage[][]>();
  let digests: string[];

  beforeAll(async () => {
    digests = FIXTURES.map(digest);
    // Every build checked before any child starts (a missing one fails here, leaving nothing
    // running); then one child per build for all four files, the builds in parallel.
    const builds = PI_VERSIONS.map(piBuild);
    const all = await Promise.all(builds.map((build) => piContexts(build, FIXTURES)));
    PI_VERSIONS.forEach((version, i) => contexts.set(version, all[i]!));
  }, 120_000);

  it("leaves the fixtures as they were (pi migrates a copy)", () => {
    expect(FIXTURES).toHaveLength(4);
    expect(FIXTURES.map(digest)).toEqual(digests);
  });

  it("every build sees the same user/assistant/toolResult sequence, ids and text", () => {
    const [first, ...others] = PI_VERSIONS;
    for (const [i, file] of FIXTURES.entries()) {
      const reference = contexts.get(first!)![i]!;
      const roles = new Set(reference.map((m) => m.role));
      for (const role of ["user", "assistant", "toolResult"]) expect(roles, `${path.basename(file)} has ${role} messages`).toContain(role);
      expect(reference.filter((m) => m.role === "toolResult").every((m) => typeof m.toolCallId === "string" && m.toolCallId.length > 0)).toBe(true);
      expect(reference.some((m) => m.role === "assistant" && m.toolCallIds!.length > 0)).toBe(true);
      for (const version of others) expect(contexts.get(version)![i], `${path.basename(file)}: pi ${version} against pi ${first}`).toEqual(reference);
    }
  });

  it("the 0.73.1 child reads what pi 0.73.1 loaded in this process reads", () => {
    const file = FIXTURES.find((f) => f.endsWith("compact.jsonl"))!; // a compaction, a glued line
    const copy = path.join(tempDir("chainpress-pi-loader-test-"), "compact.jsonl");
    fs.copyFileSync(file, copy);
    const messages = SessionManager.open(copy, path.dirname(copy)).buildSessionContext().messages as Array<Record<string, any>>;
    const text = (content: unknown) => (typeof content === "string" ? content : (content as Array<{ type: string; text?: string }>).filter((p) => p.type === "text").map((p) => p.text).join(""));
    const expected = messages.map((m) => ({
      role: m.role,
      ...(m.role === "toolResult" ? { toolCallId: m.toolCallId } : {}),
      ...(m.role === "assistant" ? { toolCallIds: m.content.filter((p: { type: string }) => p.type === "toolCall").map((p: { id: string }) => p.id) } : {}),
      text: m.role === "compactionSummary" ? m.summary : text(m.content),
    }));
    expect(expected.some((m) => m.role === "compactionSummary")).toBe(true);
    expect(contexts.get("0.73.1")![FIXTURES.indexOf(file)]).toEqual(expected);
  });
});

describe("pi's own loader on a session with context_edit entries", () => {
  /** user → assistant with two calls → their results → a failed reply → two edits → the reply. */
  function editedSession(): string {
    const at = (s: number) => `2026-11-30T10:00:${String(s).padStart(2, "0")}.000Z`;
    const ms = (s: number) => Date.parse(at(s));
    const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    const assistant = (content: unknown[], stopReason: string, s: number) => ({ role: "assistant", content, api: "openai-completions", provider: "mock", model: "mock-model", usage, stopReason, timestamp: ms(s) });
    const entries: Array<Record<string, unknown>> = [
      { type: "session", version: 3, id: "01a24236-0000-7000-8000-000000000001", timestamp: at(0), cwd: "/tmp/proj" },
      { type: "message", id: "u0000001", parentId: null, timestamp: at(1), message: { role: "user", content: [{ type: "text", text: "read both files" }], timestamp: ms(1) } },
      { type: "message", id: "a0000001", parentId: "u0000001", timestamp: at(2), message: assistant([{ type: "text", text: "reading" }, { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt" } }, { type: "toolCall", id: "call_2", name: "bash", arguments: { command: "cat b.txt" } }], "toolUse", 2) },
      { type: "message", id: "r0000001", parentId: "a0000001", timestamp: at(3), message: { role: "toolResult", toolCallId: "call_1", toolName: "read", content: [{ type: "text", text: "SECRET-TOKEN-123" }], isError: false, timestamp: ms(3) } },
      { type: "message", id: "r0000002", parentId: "r0000001", timestamp: at(4), message: { role: "toolResult", toolCallId: "call_2", toolName: "bash", content: [{ type: "text", text: "b says hi" }], isError: false, timestamp: ms(4) } },
      { type: "message", id: "a0000002", parentId: "r0000002", timestamp: at(5), message: assistant([{ type: "text", text: "a failed attempt" }], "length", 5) },
      { type: "context_edit", id: "e0000001", parentId: "a0000002", timestamp: at(6), targetId: "a0000002", replacement: null },
      { type: "context_edit", id: "e0000002", parentId: "e0000001", timestamp: at(7), targetId: "r0000001", replacement: { content: "[redacted]" } },
      { type: "message", id: "a0000003", parentId: "e0000002", timestamp: at(8), message: assistant([{ type: "text", text: "both read" }], "stop", 8) },
    ];
    const file = path.join(tempDir("chainpress-pi-loader-edits-"), "edited.jsonl");
    fs.writeFileSync(file, entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
    return file;
  }

  const start: PiContextMessage[] = [
    { role: "user", text: "read both files" },
    { role: "assistant", toolCallIds: ["call_1", "call_2"], text: "reading" },
  ];

  it("pi 1.6.0 omits the edited-out reply and shows the replacement; the raw bytes stay in the file", async () => {
    const file = editedSession();
    const before = fs.readFileSync(file);
    expect(await piContext(piBuild("1.6.0"), file)).toEqual([
      ...start,
      { role: "toolResult", toolCallId: "call_1", text: "[redacted]" },
      { role: "toolResult", toolCallId: "call_2", text: "b says hi" },
      { role: "assistant", toolCallIds: [], text: "both read" },
    ]);
    expect(fs.readFileSync(file)).toEqual(before);
  });

  it("pi 0.73.1 knows no context_edit: it sends the raw branch", async () => {
    expect(await piContext("0.73.1", editedSession())).toEqual([
      ...start,
      { role: "toolResult", toolCallId: "call_1", text: "SECRET-TOKEN-123" },
      { role: "toolResult", toolCallId: "call_2", text: "b says hi" },
      { role: "assistant", toolCallIds: [], text: "a failed attempt" },
      { role: "assistant", toolCallIds: [], text: "both read" },
    ]);
  });

  it("an unknown build or a missing file is an error, not an empty context", async () => {
    expect(() => piBuild("9.9.9")).toThrow(/no pi build 9\.9\.9; the supported builds are 0\.73\.1, 1\.6\.0/);
    await expect(piContext("1.6.0", path.join(REAL_SESSIONS_DIR, "no-such.jsonl"))).rejects.toThrow(/no session file/);
  });
});
