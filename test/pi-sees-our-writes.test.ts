// After any chainpress write, pi's own loader (SessionManager of the real pi package) must still
// see the whole conversation, with our entries on its branch. The case that broke it: a last line
// holding two entries glued together (a lost newline), which pi ignores.

import fs from "node:fs";
import path from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, removeTempDirs, runCli, tempDir, writeSmallSession } from "./helpers/cli-harness.js";

beforeAll(ensureBuilt);
afterAll(removeTempDirs);

/** The session's lines with the last two glued together, as a writer that lost a newline leaves them. */
function glueLastTwo(lines: string[]): string {
  const head = lines.slice(0, -2);
  return `${[...head, `${lines[lines.length - 2]}${lines[lines.length - 1]}`].join("\n")}\n`;
}

/** Our custom entries, from the lines that parse (the glued one does not). */
function ourEntries(file: string): Array<{ customType: string; id: string }> {
  const entries: Array<{ customType: string; id: string }> = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    try {
      const value = JSON.parse(line) as { type?: string; customType?: string; id: string };
      if (value.type === "custom" && value.customType?.startsWith("context-prune-")) entries.push({ customType: value.customType, id: value.id });
    } catch {
      // the glued line, and the empty string after the last newline
    }
  }
  return entries;
}

function piView(file: string): { messages: number; branchIds: Set<string> } {
  const manager = SessionManager.open(file, tempDir("chainpress-pi-view-"));
  return { messages: manager.buildSessionContext().messages.length, branchIds: new Set(manager.getBranch().map((e) => e.id)) };
}

describe("a glued last line", () => {
  it("compact appends under the leaf pi computes: pi keeps every message it saw, and sees our entries", () => {
    const dir = tempDir();
    const file = writeSmallSession(dir, "glued.jsonl", { chains: 3 }, glueLastTwo);
    const before = piView(file);
    expect(before.messages).toBeGreaterThan(0);

    const run = runCli(["compact", file, "--workers", "1"]);
    expect(run.status, run.stderr).toBe(0);
    const gluedLine = fs.readFileSync(file, "utf8").split("\n").findIndex((l) => l.includes('}{"type"')) + 1;
    expect(`${run.stdout}${run.stderr}`).toContain(`glued.jsonl:${gluedLine}`);
    expect(`${run.stdout}${run.stderr}`).toContain("--repair");

    const after = piView(file);
    expect(after.messages).toBeGreaterThanOrEqual(before.messages);
    const ours = ourEntries(file);
    expect(ours.length).toBeGreaterThan(0);
    for (const entry of ours) expect(after.branchIds.has(entry.id), `${entry.customType} ${entry.id} on pi's branch`).toBe(true);
  });

  it("--repair keeps a .bak, splits the line, and then pi sees the recovered entries too", () => {
    const dir = tempDir();
    const file = writeSmallSession(dir, "glued.jsonl", { chains: 3 }, glueLastTwo);
    const original = fs.readFileSync(file);
    const before = piView(file);

    const run = runCli(["compact", file, "--workers", "1", "--repair"]);
    expect(run.status, run.stderr).toBe(0);
    expect(fs.readFileSync(`${file}.bak`)).toEqual(original);
    const after = piView(file);
    // The two glued entries (a tool result and the closing reply) are back in pi's context.
    expect(after.messages).toBe(before.messages + 2);
    const ours = ourEntries(file);
    // The last chain is closed now, so all three are compressed.
    expect(ours.filter((e) => e.customType === "context-prune-chain")).toHaveLength(3);
    for (const entry of ours) expect(after.branchIds.has(entry.id)).toBe(true);
    expect(path.basename(file)).toBe("glued.jsonl");
  });
});
