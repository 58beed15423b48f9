// The read-only commands of the built CLI (render, stats) and `npm start`'s entry point, on
// copies of real sessions before and after compaction.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, copyReal, ensureBuilt, pruneEntries, REAL_SESSIONS, removeTempDirs, ROOT, runCli, runNode, sha256, tempDir } from "./helpers/cli-harness.js";

interface Stats {
  fileVersion: number;
  chains: { total: number; closed: number; interrupted: number; open: number; compressed: number };
  list: Array<{ status: string; calls: number; chars: number; coverage: string; compressed: string | null }>;
  context: { before: { messages: number; chars: number; tokens: number }; after: { messages: number; chars: number; tokens: number } };
}

let plain = "";
let compacted = "";
/** compact's own measure of the context after compression. */
let reportedAfterChars = 0;

beforeAll(() => {
  ensureBuilt();
  const dir = tempDir();
  plain = copyReal("large-session.jsonl", dir, "plain.jsonl");
  compacted = copyReal("large-session.jsonl", dir, "compacted.jsonl");
  const run = runCli(["compact", compacted, "--workers", "0", "--json"]);
  expect(run.status, run.stderr).toBe(0);
  reportedAfterChars = (JSON.parse(run.out) as { sessions: Array<{ report: { context: { afterChars: number } } }> }).sessions[0]!.report.context.afterChars;
}, 180_000);
afterAll(removeTempDirs);

function stats(file: string): Stats {
  const run = runCli(["stats", file, "--json"]);
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.out) as Stats;
}

describe("stats", () => {
  it("counts chains and shows no saving before compaction", () => {
    const before = plain;
    const hash = sha256(before);
    const s = stats(before);
    expect(s.fileVersion).toBe(1);
    expect(s.chains.total).toBe(s.chains.closed + s.chains.interrupted + s.chains.open);
    expect(s.chains.closed).toBeGreaterThan(0);
    expect(s.chains.compressed).toBe(0);
    expect(s.list.every((c) => c.compressed === null && c.coverage === "uncovered")).toBe(true);
    expect(s.context.after.chars).toBe(s.context.before.chars);
    expect(s.context.before.tokens).toBe(Math.round(s.context.before.chars / 4));
    expect(sha256(before)).toBe(hash); // read-only
  });

  it("lists the compressed chains and the smaller context after compaction", () => {
    const s = stats(compacted);
    const blockIds = pruneEntries(compacted).filter((e) => e.customType === "context-prune-chain").map((e) => e.data.blockId);
    expect(s.fileVersion).toBe(3);
    expect(s.chains.compressed).toBe(blockIds.length);
    expect(s.list.map((c) => c.compressed).filter((b) => b !== null)).toEqual(blockIds);
    expect(s.context.after.chars).toBeLessThan(s.context.before.chars);
    expect(s.context.after.chars).toBe(reportedAfterChars);
    expect(s.context.before.chars).toBe(stats(plain).context.before.chars);
  });

  it("prints a readable table", () => {
    const run = runCli(["stats", compacted]);
    expect(run.status).toBe(0);
    expect(run.out).toMatch(/chains: \d+ \(\d+ closed, \d+ interrupted, \d+ open\); \d+ compressed/);
    expect(run.out).toMatch(/context before: [\d,]+ chars \(~[\d,]+ tokens\)/);
    expect(run.out).toContain(" b1\n");
  });

  it("reads a session with a glued line, warning on stderr", () => {
    const file = copyReal("session.jsonl", tempDir());
    const run = runCli(["stats", file, "--json"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain(`${file}:440:`);
    expect((JSON.parse(run.out) as Stats).chains.closed).toBeGreaterThan(0);
  });
});

describe("render", () => {
  it("prints the rendered context as JSONL, measured as stats measures it", () => {
    const run = runCli(["render", compacted]);
    expect(run.status, run.stderr).toBe(0);
    const lines = run.out.split("\n").filter((l) => l.length > 0);
    const messages = lines.map((l) => JSON.parse(l) as { role: string });
    const s = stats(compacted);
    expect(messages.length).toBe(s.context.after.messages);
    expect(lines.reduce((sum, l) => sum + l.length, 0)).toBe(s.context.after.chars);
    expect(run.out).toContain("<compressed-chain");
  });

  it("ends quietly with status 0 when its reader goes away (`| head`)", () => {
    // bash reports the status of each side of the pipe; `head` leaves after 100 bytes of megabytes.
    const script = `"${process.execPath}" "${CLI}" render "${plain}" | head -c 100 > /dev/null; echo "status \${PIPESTATUS[0]}"`;
    const run = spawnSync("bash", ["-c", script], { encoding: "utf8", timeout: 60_000, killSignal: "SIGKILL" });
    expect(run.stdout.trim()).toBe("status 0");
    expect(run.stderr).toBe("");
  });

  it("prints a readable transcript with --text", () => {
    const run = runCli(["render", plain, "--text"]);
    expect(run.status).toBe(0);
    expect(run.out).toMatch(/^── user · \d{4}-\d\d-\d\dT/m);
    expect(run.out).toMatch(/^── toolResult \w+ \[[^\]]+\]/m);
    expect(run.out).toMatch(/^→ \w+ \{/m);
  });
});

describe("npm start entry point", () => {
  it("compacts a temporary copy of the bundled session and prints the report", () => {
    const source = path.join(REAL_SESSIONS, "large-session.jsonl");
    const hash = sha256(source);
    const run = runNode(path.join(ROOT, "dist", "src", "bin", "start-default.cjs"), ["--json", "--workers", "0"], { CHAINPRESS_DEFAULT_SESSION: source });
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.out) as { ok: boolean; sessions: Array<{ file: string; report: { compressed: string[] } }> };
    expect(report.ok).toBe(true);
    expect(report.sessions[0]!.report.compressed.length).toBeGreaterThan(0);
    expect(path.dirname(report.sessions[0]!.file)).not.toBe(path.dirname(source));
    expect(sha256(source)).toBe(hash);
    // Nothing is left in the temporary folder (issue 12): the run removes its copy.
    expect(fs.existsSync(path.dirname(report.sessions[0]!.file))).toBe(false);
    expect(run.stderr).toContain("removed the temporary copy");
  });

  it("with CHAINPRESS_KEEP_COPY=1 keeps the copy and says where", () => {
    const source = path.join(REAL_SESSIONS, "large-session.jsonl");
    const run = runNode(path.join(ROOT, "dist", "src", "bin", "start-default.cjs"), ["--json", "--workers", "0"], { CHAINPRESS_DEFAULT_SESSION: source, CHAINPRESS_KEEP_COPY: "1" });
    expect(run.status, run.stderr).toBe(0);
    const folder = path.dirname((JSON.parse(run.out) as { sessions: Array<{ file: string }> }).sessions[0]!.file);
    expect(run.stderr).toContain(`kept the compacted copy and its spill files in ${folder}`);
    expect(fs.existsSync(folder)).toBe(true);
    fs.rmSync(folder, { recursive: true, force: true });
  });
});
