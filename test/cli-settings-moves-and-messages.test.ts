/**
 * The built CLI on real files, with real worker threads: one set of settings, moved sessions, the
 * --workers cap, chains hidden by pi's compaction, and the messages a user reads.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { percentChange } from "../src/cli/summary.js";
import { copyReal, ensureBuilt, jsonLines, pruneEntries, removeTempDirs, runCli, settle, tempDir, writeSmallSession } from "./helpers/cli-harness.js";

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

type Report = {
  compressed: string[];
  recordsArchived: number;
  spilledFiles: number;
  spilledBytes: number;
  hiddenByCompaction: { hidden: number[]; cut: number[]; included: boolean };
};
type Run = { ok: boolean; sessions: Array<{ file: string; report: Report; sessionBytesAdded?: number }>; settings: { files: string[] } };

const json = (out: string): Run => JSON.parse(out) as Run;

function agentDir(chainpress: unknown): string {
  const dir = tempDir("chainpress-agent-");
  fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ defaultProvider: "x", chainpress }));
  return dir;
}

function projectDir(chainpress: unknown): string {
  const dir = tempDir("chainpress-project-");
  fs.mkdirSync(path.join(dir, ".pi"));
  fs.writeFileSync(path.join(dir, ".pi", "settings.json"), JSON.stringify({ chainpress }));
  return dir;
}

describe("one set of settings (item 3)", () => {
  it("compact honours protectedTools from <agent dir>/settings.json; a flag overrides it", () => {
    const agent = agentDir({ protectedTools: ["bash"] });
    const protectedRun = runCli(["compact", writeSmallSession(tempDir()), "--json", "--workers", "1"], { env: { PI_CODING_AGENT_DIR: agent } });
    expect(protectedRun.status, protectedRun.stderr).toBe(0);
    const report = json(protectedRun.out);
    expect(report.sessions[0]!.report.recordsArchived).toBe(0);
    expect(report.settings.files).toEqual([path.join(agent, "settings.json")]);
    const flagged = runCli(["compact", writeSmallSession(tempDir()), "--json", "--workers", "1", "--protected-tools", ""], { env: { PI_CODING_AGENT_DIR: agent } });
    expect(json(flagged.out).sessions[0]!.report.recordsArchived).toBe(6);
  });

  it("the project's .pi/settings.json is layered over the global one, as pi merges them", () => {
    const agent = agentDir({ protectedTools: ["bash"], spillThreshold: 100 });
    const project = projectDir({ protectedTools: [] });
    const run = runCli(["compact", writeSmallSession(tempDir()), "--json", "--workers", "0"], { cwd: project, env: { PI_CODING_AGENT_DIR: agent } });
    const report = json(run.out);
    // Project's empty list wins over the global ["bash"]; the global spillThreshold 100 stays.
    expect(report.sessions[0]!.report.recordsArchived).toBe(6);
    expect(report.sessions[0]!.report.spilledFiles).toBe(6);
    expect(report.settings.files).toEqual([path.join(agent, "settings.json"), path.join(project, ".pi", "settings.json")]);
  });

  it("stats and --dry-run name the settings file used; render uses its protection too", () => {
    const agent = agentDir({ protectedTools: ["bash"] });
    const file = writeSmallSession(tempDir());
    const env = { PI_CODING_AGENT_DIR: agent };
    expect(runCli(["stats", file], { env }).out).toContain(`settings: ${path.join(agent, "settings.json")}`);
    const dry = runCli(["compact", file, "--dry-run", "--workers", "0"], { env });
    expect(dry.out).toMatch(new RegExp(`^settings: ${path.join(agent, "settings.json").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    const none = runCli(["stats", file]);
    expect(none.out).toMatch(/settings: defaults \(no "chainpress" key in /);
  });
});

describe("moved sessions stay queryable (item 4)", () => {
  it("query and render find the spill files in the moved <id>-blobs/ folder, verified by digest", () => {
    const before = tempDir("chainpress-before-move-");
    const file = writeSmallSession(before, "s.jsonl", { outputChars: 400 });
    expect(runCli(["compact", file, "--spill-threshold", "100", "--workers", "1"]).status).toBe(0);
    const after = path.join(tempDir("chainpress-after-move-"), "moved");
    fs.renameSync(before, after);
    const moved = path.join(after, "s.jsonl");
    const query = runCli(["query", moved, "t1", "--raw"]);
    expect(query.stderr).toBe("");
    expect(query.status).toBe(0);
    expect(query.out).toMatch(/^out 0 0 x+$/);
    // With chain rendering off (a setting the CLI honours like the extension), archived outputs show as stubs.
    const render = runCli(["render", moved], { env: { PI_CODING_AGENT_DIR: agentDir({ chainCompression: { enabled: false } }) } });
    expect(render.stderr).toBe("");
    expect(render.out).toMatch(new RegExp(`${after.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/[\\w-]+-blobs/call_0_0_`));
    expect(render.out).not.toContain(before);
    // A file of the right name but other bytes is refused by its digest.
    const blobDir = fs.readdirSync(after).find((name) => name.endsWith("-blobs"))!;
    const first = fs.readdirSync(path.join(after, blobDir)).sort()[0]!;
    fs.writeFileSync(path.join(after, blobDir, first), "tampered");
    const tampered = runCli(["query", moved, "t1"]);
    expect(tampered.status).toBe(1);
    expect(tampered.out).toContain("Status: OUTPUT UNAVAILABLE");
    expect(tampered.out).not.toContain("Status: OK");
  });
});

describe("--workers cap (item 5)", () => {
  it("asks for more threads than the machine has: capped, with a note, and the run succeeds", () => {
    const run = runCli(["compact", writeSmallSession(tempDir()), "--workers", "500", "--json"]);
    expect(run.status, run.stderr).toBe(0);
    const available = os.availableParallelism();
    expect(run.stderr).toContain(`--workers 500 is more than this machine's available parallelism (${available}); using ${available}`);
  });
});

describe("chains behind pi's compaction (item 6)", () => {
  it("are skipped and reported by default; the summary gives bytes appended and spill bytes written", () => {
    const file = copyReal("before-compaction.jsonl", tempDir());
    const run = runCli(["compact", file, "--json", "--workers", "1"]);
    expect(run.status, run.stderr).toBe(0);
    const outcome = json(run.out).sessions[0]!;
    const hidden = new Set(outcome.report.hiddenByCompaction.hidden);
    expect(hidden.size).toBeGreaterThan(0);
    const compressedStarts = pruneEntries(file).filter((e) => e.customType === "context-prune-chain").map((e) => e.data.startUserTimestamp as number);
    expect(compressedStarts.length).toBeGreaterThan(0);
    expect(compressedStarts.filter((start) => hidden.has(start))).toEqual([]);
    expect(outcome.sessionBytesAdded).toBeGreaterThan(0);
    const text = runCli(["compact", copyReal("before-compaction.jsonl", tempDir()), "--workers", "1"]).out;
    expect(text).toMatch(/hidden by compaction: \d+ chains left alone \(--include-compacted compresses them anyway\)/);
    expect(text).toMatch(/appended: \d+ entries to the session file, \+[\d,]+ bytes on disk/);
    expect(text).toMatch(/spill files? \([\d,]+ bytes written\)/);
  });

  it("--include-compacted compresses the whole hidden chains, never the cut ones", () => {
    const file = copyReal("compact.jsonl", tempDir());
    const plain = json(runCli(["compact", copyReal("compact.jsonl", tempDir()), "--json", "--workers", "1"]).out).sessions[0]!.report;
    expect(plain.compressed).toEqual([]);
    const forced = json(runCli(["compact", file, "--json", "--workers", "1", "--include-compacted"]).out).sessions[0]!.report;
    expect(forced.hiddenByCompaction.included).toBe(true);
    expect(forced.compressed.length).toBeGreaterThan(0);
    const cut = new Set(forced.hiddenByCompaction.cut);
    const starts = pruneEntries(file).filter((e) => e.customType === "context-prune-chain").map((e) => e.data.startUserTimestamp as number);
    expect(starts.filter((start) => cut.has(start))).toEqual([]);
  });
});

describe("messages a user understands (item 7)", () => {
  it("stats and render on a folder say it is a folder", () => {
    const dir = tempDir();
    for (const command of ["stats", "render"]) {
      const run = runCli([command, dir]);
      expect(run.status).toBe(1);
      expect(run.stderr.trim()).toBe(`chainpress: ${dir}: is a folder, not a session file (give one *.jsonl file; only compact searches folders)`);
    }
  });

  it("a read-only folder is one sentence naming it", () => {
    if (process.getuid?.() === 0) return; // root writes anywhere: no EACCES to provoke
    const dir = tempDir();
    const file = writeSmallSession(dir);
    fs.chmodSync(dir, 0o555);
    try {
      const run = runCli(["compact", file, "--workers", "0"]);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`cannot compact: the folder ${dir} is not writable`);
    } finally {
      fs.chmodSync(dir, 0o755);
    }
  });

  it("a session whose compression would grow it is left alone, a growth reads as growth, and a dry run says what it would do", () => {
    // Tiny outputs: each chain's compressed form would outweigh them (core/chain-shrink.ts).
    const tiny = runCli(["compact", writeSmallSession(tempDir(), "tiny.jsonl", { outputChars: 5 }), "--dry-run", "--workers", "0"]);
    expect(tiny.out).toMatch(/skipped: 3 \(would-grow 3\)/);
    const file = writeSmallSession(tempDir(), "small.jsonl");
    const dry = runCli(["compact", file, "--dry-run", "--workers", "0"]);
    expect(dry.out).toMatch(/would compress: 3 chains/);
    expect(dry.out).toMatch(/would archive: 6 records/);
    expect(dry.out).toMatch(/would append: 6 entries/);
    // A growth reads as growth (a session whose compressed bodies outweigh tiny outputs).
    expect(percentChange(1000, 1297)).toBe(", 29.7% larger");
    expect(percentChange(1000, 703)).toBe(", 29.7% smaller");
    expect(percentChange(1000, 1000)).toBe(", unchanged");
  });

  it("a folder scan skips files that are not pi sessions with a note, and exits 0", () => {
    const dir = tempDir();
    writeSmallSession(dir, "real.jsonl");
    fs.writeFileSync(path.join(dir, "other-tool.jsonl"), '{"level":"info","msg":"not a session"}\n');
    settle(path.join(dir, "other-tool.jsonl"));
    const run = runCli(["compact", dir, "--workers", "0"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain(`chainpress: note: skipped ${path.join(dir, "other-tool.jsonl")}: not a pi session`);
    expect(fs.readFileSync(path.join(dir, "other-tool.jsonl"), "utf8")).toBe('{"level":"info","msg":"not a session"}\n');
  });

  it("query shows the user turn of a backfilled record", () => {
    const file = writeSmallSession(tempDir());
    runCli(["compact", file, "--workers", "0"]);
    const run = runCli(["query", file, "t3"]);
    expect(run.status, run.stderr).toBe(0);
    // t3 is the first call of the second chain: user turn 2.
    expect(run.out).toContain("Turn: 2 (user turn in the session; the archive records none)");
    expect(jsonLines(file).length).toBeGreaterThan(0);
  });
});
