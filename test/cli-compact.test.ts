// The built `chainpress compact` on copies of the real pi sessions: the JSON report, the entries
// actually appended, idempotence, --dry-run and --out leaving the input byte-identical, and
// identical results with and without worker threads.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compactWorkersFor, defaultWorkers } from "../src/cli/options.js";
import { SMALL_SESSION_BYTES } from "../src/main/small-session.js";
import { copyReal, ensureBuilt, jsonLines, pruneEntries, removeTempDirs, runCli, settle, sha256, tempDir } from "./helpers/cli-harness.js";

const REAL = ["before-compaction.jsonl", "compact.jsonl", "large-session.jsonl", "session.jsonl"];

beforeAll(() => ensureBuilt(), 180_000);
afterAll(removeTempDirs);

interface JsonRun {
  ok: boolean;
  sessions: Array<{ file: string; target: string; ok: boolean; backup?: string; droppedLines?: number[]; error?: string; report: Report }>;
  totals: { sessions: number; failed: number; chainsCompressed: number };
}
interface Report {
  migrated: boolean;
  dryRun: boolean;
  compressed: string[];
  skipped: { total: number; byReason: Record<string, number> };
  recordsArchived: number;
  spilledFiles: number;
  appendedEntries: number;
  context: { beforeChars: number; afterChars: number; beforeTokens: number; afterTokens: number };
  hiddenByCompaction: { hidden: number[]; cut: number[] };
  wallMs: number;
  eventLoopMaxMs: number;
  peakRssBytes: number;
  phaseMs: { scan: number; untilFirstChain: number; chains: number; afterChains: number };
}

function compactJson(args: string[]): JsonRun {
  const run = runCli(["compact", ...args, "--json"]);
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.out) as JsonRun;
}

function checkAppended(file: string, report: Report): void {
  const lines = jsonLines(file); // throws if any line does not parse
  expect(lines[0]).toMatchObject({ type: "session", version: 3 });
  const entries = pruneEntries(file);
  expect(entries).toHaveLength(report.appendedEntries);
  expect(entries.filter((e) => e.customType === "context-prune-chain").map((e) => e.data.blockId)).toEqual(report.compressed);
  const index = entries.filter((e) => e.customType === "context-prune-index");
  expect(index.length).toBeGreaterThan(0);
  let records = 0;
  for (const entry of index) {
    const data = entry.data as { backfilled?: boolean; toolCalls: Array<{ toolCallId: string; resultTimestamp?: number }>; refs: Array<{ shortId: string; toolCallId: string; resultTimestamp?: number }> };
    expect(data.backfilled).toBe(true);
    expect(data.refs.map((r) => `${r.toolCallId}@${r.resultTimestamp}`)).toEqual(data.toolCalls.map((r) => `${r.toolCallId}@${r.resultTimestamp}`));
    for (const ref of data.refs) expect(ref.shortId).toMatch(/^t\d+$/);
    records += data.toolCalls.length;
  }
  expect(records).toBe(report.recordsArchived);
}

describe("compact over a folder of the real sessions", () => {
  it("compresses chains in each, appends parseable backfilled entries, and a second run appends nothing", () => {
    const dir = tempDir();
    for (const name of REAL) copyReal(name, dir);
    const first = compactJson([dir, "--workers", "1"]);
    expect(first.ok).toBe(true);
    expect(first.sessions.map((s) => path.basename(s.file))).toEqual(REAL);
    for (const session of first.sessions) {
      const name = path.basename(session.file);
      const r = session.report;
      expect(session.ok, session.error).toBe(true);
      expect(r.migrated).toBe(true);
      // compact.jsonl's closed chains all lie before pi's own compaction point: compressing them
      // would save no context, so by default they are skipped and reported as hidden.
      if (name === "compact.jsonl") {
        expect(r.compressed, name).toEqual([]);
        expect(r.hiddenByCompaction.hidden.length + r.hiddenByCompaction.cut.length, name).toBeGreaterThan(0);
      } else expect(r.compressed.length, name).toBeGreaterThan(0);
      expect(r.context.afterChars).toBeLessThanOrEqual(r.context.beforeChars);
      expect(r.context.afterTokens).toBe(Math.round(r.context.afterChars / 4));
      for (const reason of Object.keys(r.skipped.byReason)) expect(["no-summary", "already-compressed", "would-grow"]).toContain(reason);
      if (r.compressed.length > 0) checkAppended(session.file, r);
      expect(session.backup).toBeUndefined();
    }

    const saved = first.sessions.filter((s) => s.report.context.afterChars < s.report.context.beforeChars);
    expect(saved.length).toBeGreaterThanOrEqual(3);

    const hashes = first.sessions.map((s) => sha256(s.file));
    for (const s of first.sessions) settle(s.file);
    const second = compactJson([dir, "--workers", "0"]);
    second.sessions.forEach((session, i) => {
      const r = session.report;
      expect(r.compressed).toEqual([]);
      expect(r.appendedEntries).toBe(0);
      expect(r.skipped.byReason["already-compressed"] ?? 0).toBe(first.sessions[i]!.report.compressed.length);
      expect(sha256(session.file)).toBe(hashes[i]);
    });
  });
});

describe("the report's figures of the run itself", () => {
  it("event-loop stall, peak RSS, and the wall time split into phases that add up to it", () => {
    const dir = tempDir();
    const file = copyReal("large-session.jsonl", dir);
    const phases = (r: Report) => [r.phaseMs.scan, r.phaseMs.untilFirstChain, r.phaseMs.chains, r.phaseMs.afterChains];
    const first = compactJson([file, "--workers", "2"]).sessions[0]!.report;
    expect(first.compressed.length).toBeGreaterThan(0);
    expect(first.eventLoopMaxMs).toBeGreaterThanOrEqual(0);
    expect(first.eventLoopMaxMs).toBeLessThan(first.wallMs);
    // A Node process holds tens of MB before it reads anything; no run here comes near 4 GB.
    expect(first.peakRssBytes).toBeGreaterThan(20e6);
    expect(first.peakRssBytes).toBeLessThan(4e9);
    for (const ms of phases(first)) expect(ms).toBeGreaterThanOrEqual(0);
    expect(phases(first).reduce((a, b) => a + b, 0)).toBeCloseTo(first.wallMs, 3);
    expect(first.phaseMs.scan).toBeGreaterThan(0);
    expect(first.phaseMs.chains).toBeGreaterThan(0);
    settle(file);
    // Nothing left to compress: no chain task, so everything after the scan is before the first.
    const second = compactJson([file, "--workers", "2"]).sessions[0]!.report;
    expect(second.compressed).toEqual([]);
    expect([second.phaseMs.chains, second.phaseMs.afterChains]).toEqual([0, 0]);
    expect(second.phaseMs.scan + second.phaseMs.untilFirstChain).toBeCloseTo(second.wallMs, 3);
  });
});

describe("compact leaves the input alone when asked", () => {
  it("--dry-run reports the work but writes nothing at all", () => {
    const dir = tempDir();
    const file = copyReal("large-session.jsonl", dir);
    const before = sha256(file);
    const { sessions } = compactJson([file, "--dry-run", "--spill-threshold", "2000", "--workers", "0"]);
    const r = sessions[0]!.report;
    expect(r.dryRun).toBe(true);
    expect(r.compressed.length).toBeGreaterThan(0);
    expect(r.spilledFiles).toBeGreaterThan(0);
    expect(r.appendedEntries).toBeGreaterThan(0);
    expect(sha256(file)).toBe(before);
    // No spill folder, lock or backup either.
    expect(fs.readdirSync(dir)).toEqual(["large-session.jsonl"]);
  });

  it("--out compacts a copy; the input stays byte-identical; an existing FILE needs --force", () => {
    const dir = tempDir();
    const file = copyReal("large-session.jsonl", dir);
    const out = path.join(dir, "out", "copy.jsonl");
    fs.mkdirSync(path.dirname(out));
    const before = sha256(file);
    const { sessions } = compactJson([file, "--out", out, "--workers", "0"]);
    expect(sessions[0]!.target).toBe(out);
    expect(sha256(file)).toBe(before);
    checkAppended(out, sessions[0]!.report);
    expect(fs.existsSync(`${out}.chainpress.lock`)).toBe(false);

    const again = runCli(["compact", file, "--out", out, "--json"]);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain(`${out}: already exists`);
    const forced = runCli(["compact", file, "--out", out, "--force", "--json"]);
    expect(forced.status, forced.stderr).toBe(0);
    expect(sha256(file)).toBe(before);
  });
});

describe("worker threads do not change the result", () => {
  /** Appended entries without what legitimately differs (ids, times, the folder in spill paths). */
  function normalized(file: string): unknown[] {
    const dir = path.dirname(file);
    return pruneEntries(file).map((entry) => {
      const data = JSON.parse(JSON.stringify(entry.data).replaceAll(dir, "<dir>")) as Record<string, unknown>;
      delete data.compressedAt;
      return { customType: entry.customType, data };
    });
  }

  function spillFiles(file: string): Record<string, string> {
    const files: Record<string, string> = {};
    for (const entry of fs.readdirSync(path.dirname(file), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.parentPath.endsWith("-blobs")) files[entry.name] = sha256(path.join(entry.parentPath, entry.name));
    }
    return files;
  }

  it("--workers 0 and --workers 2 append the same entries and write the same spill files", () => {
    const runs = ["0", "2"].map((workers) => {
      const file = copyReal("large-session.jsonl", tempDir());
      const { sessions } = compactJson([file, "--workers", workers, "--spill-threshold", "2000"]);
      expect(sessions[0]!.report.spilledFiles).toBeGreaterThan(0);
      return { entries: normalized(file), spills: spillFiles(file) };
    });
    expect(runs[1]!.entries).toEqual(runs[0]!.entries);
    expect(Object.keys(runs[0]!.spills).length).toBeGreaterThan(0);
    expect(runs[1]!.spills).toEqual(runs[0]!.spills);
  });
});

describe("how many worker threads compact runs by default", () => {
  it("none for session files under 16 MiB in all; `--workers` overrides; the JSON report says which", () => {
    const dir = tempDir();
    const file = copyReal("session.jsonl", dir);
    const run = compactJson([file]) as JsonRun & { workers: number };
    expect(run.workers).toBe(0);
    const again = compactJson([copyReal("session.jsonl", dir, "again.jsonl"), "--workers", "1"]) as JsonRun & { workers: number };
    expect(again.workers).toBe(1);
  });

  it("the pool for a folder, and for files of 16 MiB or more in all (sizes as stat sees them)", () => {
    const dir = tempDir();
    const small = copyReal("session.jsonl", dir);
    const big = path.join(dir, "big.jsonl");
    // A sparse file: its size is all the rule reads.
    fs.writeFileSync(big, "");
    fs.truncateSync(big, SMALL_SESSION_BYTES - fs.statSync(small).size);
    expect(compactWorkersFor([small])).toBe(0);
    expect(compactWorkersFor([small, big])).toBe(defaultWorkers());
    expect(compactWorkersFor([dir])).toBe(defaultWorkers());
    fs.truncateSync(big, SMALL_SESSION_BYTES - fs.statSync(small).size - 1);
    expect(compactWorkersFor([small, big])).toBe(0);
  });
});
