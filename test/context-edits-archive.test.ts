/**
 * Where pi 1.6's context edits meet the archive, through the real CLI on real files: chainpress
 * archives what the projection shows, an omitted reply is not part of its chain, an edit made
 * after its target was archived still applies, and the model never gets back, through render or
 * query, content the projection hides. The raw bytes stay in the session file, as pi keeps them.
 */

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, pruneEntries, removeTempDirs, runCli, tempDir } from "./helpers/cli-harness.js";
import { SessionLines } from "./helpers/session-lines.js";

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

const SECRET = "SECRET-TOKEN-4242";
const long = (tag: string) => `${tag} ${"x".repeat(400)}`;

describe("context edits and the archive", () => {
  let dir: string;
  let file: string;
  let s: SessionLines;
  let third: { resultIds: string[] };
  const replyAt: Record<string, number> = {};
  const timestampOf = (id: string) => s.timestampOf(id);

  beforeAll(() => {
    dir = tempDir("chainpress-edits-");
    file = path.join(dir, "s.jsonl");
    s = new SessionLines();
    const first = s.chain("one", [long(`${SECRET} printed by a command`), long("plain output")]);
    replyAt.one = timestampOf(s.reply("one done"));
    s.edit(first.resultIds[0]!, { content: "[redacted]" });
    s.chain("two", [long("two output")]);
    const failed = s.reply("", "error");
    s.edit(failed, null);
    replyAt.retry = timestampOf(s.reply("two done after retry"));
    third = s.chain("three", [long("THIRD-RAW-OUTPUT")]);
    replyAt.three = timestampOf(s.reply("three done"));
    s.write(file);
  });

  it("archives what the projection shows, and closes a chain at the reply pi sends, not at the omitted attempt", () => {
    expect(runCli(["compact", file, "--workers", "0"]).status).toBe(0);
    const index = pruneEntries(file).filter((e) => e.customType === "context-prune-index");
    const records = index.flatMap((e) => e.data.toolCalls as Array<{ toolCallId: string; resultText: string }>);
    expect(records.find((r) => r.toolCallId === "one_call_0")!.resultText).toBe("[redacted]");
    expect(records.find((r) => r.toolCallId === "one_call_1")!.resultText).toBe(long("plain output"));
    const chains = pruneEntries(file).filter((e) => e.customType === "context-prune-chain");
    expect(chains).toHaveLength(3);
    const finals = chains.map((c) => c.data.finalAssistantTimestamp);
    expect(finals).toEqual([replyAt.one, replyAt.retry, replyAt.three]);
    // The raw bytes stay in the session file, as pi keeps them.
    expect(fs.readFileSync(file, "utf8")).toContain(SECRET);
  });

  it("neither render nor query gives back what the projection hides", () => {
    const render = runCli(["render", file, "--text"]);
    expect(render.status).toBe(0);
    expect(render.out).not.toContain(SECRET);
    const query = runCli(["query", file, "t1", "--raw"]);
    expect(query.status, query.stderr).toBe(0);
    expect(query.out).toBe("[redacted]");
  });

  it("an edit made after its target was archived applies to render and query too", () => {
    const before = runCli(["query", file, "t4", "--raw"]);
    expect(before.out).toBe(long("THIRD-RAW-OUTPUT"));
    appendEdit(file, third.resultIds[0]!, { content: "[removed later]" });
    expect(runCli(["query", file, "t4", "--raw"]).out).toBe("[removed later]");
    const render = runCli(["render", file, "--text"]);
    expect(render.out).not.toContain("THIRD-RAW-OUTPUT");
    appendEdit(file, third.resultIds[0]!, null);
    const omitted = runCli(["query", file, "t4", "--raw"]);
    expect(omitted.out).toContain("omitted from the context by a context edit");
    expect(omitted.out).not.toContain("THIRD-RAW-OUTPUT");
  });
});

/** Appends a context edit under the session's last entry, as pi 1.6 would. */
function appendEdit(file: string, targetId: string, replacement: null | { content: unknown }): void {
  const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n");
  const last = JSON.parse(lines[lines.length - 1]!) as { id: string };
  const id = `edit${lines.length}`;
  fs.appendFileSync(file, `${JSON.stringify({ type: "context_edit", id, parentId: last.id, timestamp: new Date().toISOString(), targetId, replacement })}\n`);
}
