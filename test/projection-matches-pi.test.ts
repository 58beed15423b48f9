/**
 * chainpress reads a session as pi 1.6 does: before any compaction, `chainpress render` gives the
 * message list pi 1.6's own loader builds (role, tool-call ids, text), on the real sessions in
 * fixtures/ (migrated by pi 1.6 as it opens them) and on sessions with context edits, a system checkpoint and
 * a retain-none compaction. After `chainpress compact`, pi 1.6's loader still sees every message
 * it saw before.
 */

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyReal, ensureBuilt, removeTempDirs, runCli, settle, tempDir } from "./helpers/cli-harness.js";
import { REAL_SESSIONS_DIR, REPO_ROOT } from "./helpers/fixture-paths.js";
import { migrateWithPi, piContexts, type PiContextMessage } from "./helpers/pi-loader.js";
import { reduceRendered, renderLines } from "./helpers/render-shape.js";
import { SessionLines } from "./helpers/session-lines.js";

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

function rendered(file: string): PiContextMessage[] {
  const run = runCli(["render", file]);
  expect(run.status, run.stderr).toBe(0);
  return renderLines(run.out).map(reduceRendered);
}

/** A pi 1.6 session with every kind of edit, system messages, usage entries and a checkpointed compaction. */
function editedSession(file: string, compaction: "kept" | "retain-none"): void {
  const s = new SessionLines();
  s.message({ role: "system", content: "prompt one" });
  const first = s.chain("one", ["secret output", "plain output"]);
  const failed = s.reply("", "error");
  s.edit(failed, null);
  s.reply("one done");
  s.edit(first.resultIds[0]!, { content: "[redacted]" });
  s.add({ type: "usage", kind: "cache_warm", provider: "mock", model: "m", usage: { input: 0, output: 0 } });
  const kept = s.message({ role: "user", content: [{ type: "text", text: "second task" }] });
  s.message({ role: "system", content: "prompt two" });
  s.reply("second done");
  const compactionId = `e${(s.lines.length).toString(16).padStart(7, "0")}`;
  s.add({ type: "compaction", summary: "what happened", firstKeptEntryId: compaction === "kept" ? kept : compactionId, tokensBefore: 100, systemMessage: { role: "system", content: "checkpoint", timestamp: 1 } });
  const later = s.chain("three", ["three out"]);
  s.edit(later.resultIds[0]!, { content: [{ type: "text", text: "three " }, { type: "text", text: "edited" }] });
  s.reply("three done");
  s.write(file);
}

describe("chainpress's render before any compaction is pi 1.6's context", () => {
  let dir: string;
  let files: string[];

  beforeAll(async () => {
    dir = tempDir("chainpress-projection-");
    const reals = fs.readdirSync(REAL_SESSIONS_DIR).filter((f) => f.endsWith(".jsonl")).sort().map((name) => copyReal(name, dir));
    const bundled = path.join(dir, "default-session.jsonl");
    fs.copyFileSync(path.join(REPO_ROOT, "fixtures", "large-sessions", "default-session.jsonl"), bundled);
    settle(bundled);
    const kept = path.join(dir, "edited-kept.jsonl");
    editedSession(kept, "kept");
    const none = path.join(dir, "edited-retain-none.jsonl");
    editedSession(none, "retain-none");
    files = [...reals, bundled, kept, none];
    // As a user's pi 1.6 would have them: migrated to version 3 where they lie (pi drops what it cannot parse).
    await migrateWithPi("1.6.0", files);
  }, 120_000);

  it("on the real sessions, the bundled one and sessions with edits", async () => {
    const pi = await piContexts("1.6.0", files);
    for (const [i, file] of files.entries()) expect(rendered(file), path.basename(file)).toEqual(pi[i]);
    // The edited sessions really exercise the projection.
    const kept = pi[files.length - 2]!.map((m) => `${m.role}:${m.text}`);
    expect(kept).toEqual(["system:checkpoint", "compactionSummary:what happened", "user:second task", "assistant:second done", "user:task three", "assistant:", "toolResult:three edited", "assistant:three done"]);
  }, 120_000);

  it("after chainpress compact, pi 1.6 still sees every message it saw before", async () => {
    const before = await piContexts("1.6.0", files);
    for (const file of files) {
      // --force: pi has just rewritten the files (its migration), which the quiet-file check would refuse.
      const run = runCli(["compact", file, "--workers", "0", "--include-compacted", "--force"]);
      expect(run.status, `${path.basename(file)}: ${run.stderr}`).toBe(0);
      // pi's leaf is the file's last entry: ours, so the messages pi sees below hang above our entries.
      const last = JSON.parse(fs.readFileSync(file, "utf8").trimEnd().split("\n").pop()!) as { type: string; customType?: string };
      expect(`${last.type}:${last.customType}`, path.basename(file)).toMatch(/^custom:context-prune-/);
    }
    const after = await piContexts("1.6.0", files);
    for (const [i, file] of files.entries()) expect(after[i], path.basename(file)).toEqual(before[i]);
  }, 180_000);
});
