// `compact --out`, issue 45: the copy is atomic (a full disk or a kill mid-copy or mid-compaction
// leaves no file at the target and no temporary file, the input untouched, and a rerun works) and
// self-contained (its records name spill files in its own blob folder, so it outlives the
// input's folder). Real files, a real full tmpfs where this machine can mount one (else a real
// EFBIG from `ulimit -f`, said in the test's title), the built CLI.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blobDirFor } from "../src/core/spill-layout.js";
import { CLI, ensureBuilt, jsonLines, NO_AGENT_DIR, originalOutputs, removeTempDirs, runCli, settle, sha256, tempDir } from "./helpers/cli-harness.js";
import { REPO_ROOT } from "./helpers/fixture-paths.js";
import { calls, SessionBuilder } from "./helpers/session-builder.js";
import { canMountTmpfs, fillTo, tryMountTmpfs, umount } from "./helpers/tmpfs.js";

const SESSION_ID = "45450000-aaaa-4bbb-8ccc-000000000045";
const SPILL = ["--spill-threshold", "2000", "--workers", "0"];

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

/**
 * A session compacted once in place (its big outputs spilled into its blob folder), then grown
 * by two more closed chains, one with outputs that the next compaction spills.
 */
function compactedThenGrown(dir: string): string {
  const builder = new SessionBuilder(SESSION_ID);
  builder.chain("first", calls("a", 3, 5000));
  builder.chain("second", calls("b", 2, 300));
  const early = builder.lines.length;
  builder.chain("third", calls("c", 3, 6000));
  builder.chain("fourth", calls("d", 2, 300));
  const lines = builder.lines.map((line) => JSON.stringify(line));
  const file = path.join(dir, "input.jsonl");
  fs.writeFileSync(file, `${lines.slice(0, early).join("\n")}\n`);
  settle(file);
  const first = runCli(["compact", file, ...SPILL]);
  expect(first.status, first.stderr).toBe(0);
  const last = jsonLines(file).at(-1)!;
  const rest = builder.lines.slice(early).map((line, i) => JSON.stringify(i === 0 ? { ...(line as object), parentId: last.id } : line));
  fs.appendFileSync(file, `${rest.join("\n")}\n`);
  settle(file);
  expect(spilledRecords(file).length).toBeGreaterThan(0);
  return file;
}

interface IndexRecord {
  toolCallId: string;
  resultTimestamp?: number;
  spillPath?: string;
}

function indexRecords(file: string): IndexRecord[] {
  return jsonLines(file)
    .filter((e) => e.type === "custom" && e.customType === "context-prune-index")
    .flatMap((e) => (e.data as { toolCalls: IndexRecord[] }).toolCalls);
}

function spilledRecords(file: string): IndexRecord[] {
  return indexRecords(file).filter((r) => r.spillPath !== undefined);
}

/** Every ref of the session: `tN` → `<toolCallId>@<resultTimestamp>`. */
function refsOf(file: string): Map<string, string> {
  const refs = new Map<string, string>();
  for (const entry of jsonLines(file)) {
    if (entry.type !== "custom" || entry.customType !== "context-prune-index") continue;
    for (const ref of (entry.data as { refs?: Array<{ shortId: string; toolCallId: string; resultTimestamp?: number }> }).refs ?? []) {
      refs.set(ref.shortId, `${ref.toolCallId}@${ref.resultTimestamp}`);
    }
  }
  return refs;
}

/** `query --raw` of every ref gives exactly the original output. */
function expectEveryRefExact(copy: string, originals: Map<string, string>): number {
  const refs = refsOf(copy);
  expect(refs.size).toBeGreaterThan(0);
  const run = runCli(["query", copy, ...refs.keys(), "--raw"]);
  expect(run.status, run.stderr).toBe(0);
  const bodies = run.out.split("\0");
  expect(bodies).toHaveLength(refs.size);
  [...refs.values()].forEach((key, i) => expect(bodies[i], key).toBe(originals.get(key)));
  return refs.size;
}

/** Names in `dir` (and in its blob folder) that a chainpress run uses as temporary names. */
function temporaryNames(dir: string): string[] {
  const blobDir = blobDirFor(dir, SESSION_ID);
  const names = [...fs.readdirSync(dir), ...(fs.existsSync(blobDir) ? fs.readdirSync(blobDir) : [])];
  return names.filter((name) => name.includes(".chainpress-") || name.startsWith(".tmp-"));
}

describe("--out is self-contained", () => {
  it("after --out into another folder and the input's folder deleted, every ref of the copy (earlier ones too) queries to the exact bytes", () => {
    const inputDir = tempDir();
    const input = compactedThenGrown(inputDir);
    const originals = originalOutputs(input);
    const earlier = new Set(spilledRecords(input).map((r) => `${r.toolCallId}@${r.resultTimestamp}`));
    const out = path.join(tempDir(), "copy.jsonl");
    const run = runCli(["compact", input, "--out", out, ...SPILL]);
    expect(run.status, run.stderr).toBe(0);
    fs.rmSync(inputDir, { recursive: true });

    const queried = expectEveryRefExact(out, originals);
    // The refs archived by the input's earlier compaction were among them, spilled.
    const spilledKeys = new Set(spilledRecords(out).map((r) => `${r.toolCallId}@${r.resultTimestamp}`));
    for (const key of earlier) expect(spilledKeys.has(key), key).toBe(true);
    expect(queried).toBeGreaterThan(earlier.size);
    // Every record names a file in the copy's own blob folder.
    const blobDir = blobDirFor(path.dirname(out), SESSION_ID);
    for (const record of spilledRecords(out)) expect(path.dirname(record.spillPath!)).toBe(blobDir);
  });

  it("the copy's lines are the input's, byte for byte, but for the spillPath values (in the input's own folder, not even those); then the appended entries", () => {
    const input = compactedThenGrown(tempDir());
    const out = path.join(tempDir(), "copy.jsonl");
    const run = runCli(["compact", input, "--out", out, ...SPILL]);
    expect(run.status, run.stderr).toBe(0);

    const blobDir = blobDirFor(path.dirname(out), SESSION_ID);
    const inputLines = fs.readFileSync(input, "utf8").split("\n");
    const copyLines = fs.readFileSync(out, "utf8").split("\n");
    let rewritten = 0;
    inputLines.slice(0, -1).forEach((line, i) => {
      let expected = line;
      for (const record of lineRecords(line)) {
        const moved = path.join(blobDir, path.basename(record.spillPath!));
        expected = expected.replaceAll(`"spillPath":${JSON.stringify(record.spillPath)}`, `"spillPath":${JSON.stringify(moved)}`);
      }
      if (expected !== line) rewritten++;
      expect(copyLines[i], `line ${i + 1}`).toBe(expected);
    });
    expect(rewritten).toBeGreaterThan(0);
    // Past the input's lines only the entries this compaction appended.
    const appended = copyLines.slice(inputLines.length - 1, -1).map((line) => JSON.parse(line) as { type: string; customType: string });
    expect(appended.length).toBeGreaterThan(0);
    for (const entry of appended) expect(`${entry.type} ${entry.customType}`).toMatch(/^custom context-prune-/);
    // The files those records name are there, with the input's bytes.
    // On one device they are hard links to the input's files.
    for (const record of spilledRecords(input)) {
      const name = path.basename(record.spillPath!);
      const source = path.join(blobDirFor(path.dirname(input), SESSION_ID), name);
      expect(fs.readFileSync(path.join(blobDir, name)).equals(fs.readFileSync(source))).toBe(true);
      expect(fs.statSync(path.join(blobDir, name)).ino).toBe(fs.statSync(source).ino);
    }

    // Into the input's own folder the blob folder is the same: no line changes at all, and
    // only the new chain's three spill files are added.
    const inputBlobs = blobDirFor(path.dirname(input), SESSION_ID);
    const blobNames = fs.readdirSync(inputBlobs);
    const beside = path.join(path.dirname(input), "copy.jsonl");
    const sameFolder = runCli(["compact", input, "--out", beside, ...SPILL]);
    expect(sameFolder.status, sameFolder.stderr).toBe(0);
    const inputBytes = fs.readFileSync(input);
    expect(fs.readFileSync(beside).subarray(0, inputBytes.length).equals(inputBytes)).toBe(true);
    expect(fs.readdirSync(inputBlobs).filter((name) => !blobNames.includes(name))).toHaveLength(3);
  });

  it("a missing or damaged spill file of the input fails the run, naming the entry, and writes no copy", () => {
    for (const damage of ["missing", "damaged"] as const) {
      const inputDir = tempDir();
      const input = compactedThenGrown(inputDir);
      const victim = spilledRecords(input)[1]!;
      const file = path.join(blobDirFor(inputDir, SESSION_ID), path.basename(victim.spillPath!));
      if (damage === "missing") fs.rmSync(file);
      else fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("x", "y"));
      const before = sha256(input);
      const outDir = tempDir();
      const out = path.join(outDir, "copy.jsonl");
      const run = runCli(["compact", input, "--out", out, ...SPILL]);
      expect(run.status, damage).toBe(1);
      expect(run.stderr).toMatch(new RegExp(`context-prune-index entry \\S+, record ${victim.toolCallId}: `));
      expect(run.stderr).toContain(damage === "missing" ? "spill file not found" : "does not match its recorded digest");
      expect(run.stderr).toContain("--out wrote no copy");
      expect(fs.existsSync(out)).toBe(false);
      expect(temporaryNames(outDir)).toEqual([]);
      expect(sha256(input)).toBe(before);
    }
  });
});

describe("--out never writes through a link", () => {
  it("a blob folder at the target that is a symbolic link is refused; nothing is written where it points", () => {
    const input = compactedThenGrown(tempDir());
    const outDir = tempDir();
    const elsewhere = tempDir();
    fs.symlinkSync(elsewhere, blobDirFor(outDir, SESSION_ID));
    const out = path.join(outDir, "copy.jsonl");
    const run = runCli(["compact", input, "--out", out, ...SPILL]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("spill folder is a symbolic link");
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    expect(fs.readdirSync(outDir).sort()).toEqual([`${SESSION_ID}-blobs`]);
  });
});

function lineRecords(line: string): IndexRecord[] {
  const entry = JSON.parse(line) as { type?: string; customType?: string; data?: { toolCalls?: IndexRecord[] } };
  if (entry.type !== "custom" || entry.customType !== "context-prune-index") return [];
  return (entry.data?.toolCalls ?? []).filter((r) => r.spillPath !== undefined);
}

// ---------------------------------------------------------------------------------------------
// Atomic. Each failure: exit 1, no file at the target, no temporary file, the input unchanged;
// then a rerun with room succeeds and the copy is whole.

interface FailedRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

function expectFailedCleanly(run: FailedRun, input: string, inputHash: string, out: string): void {
  expect(run.status, run.stderr).toBe(1);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  expect(fs.existsSync(out)).toBe(false);
  expect(temporaryNames(path.dirname(out))).toEqual([]);
  expect(sha256(input)).toBe(inputHash);
}

/** The JSON report of a run, when it got as far as compacting. */
function compactedBeforeFailing(run: FailedRun): boolean {
  if (!run.stdout.trim().startsWith("{")) return false;
  const session = (JSON.parse(run.stdout) as { sessions: Array<{ report?: unknown; failedChains: number }> }).sessions[0]!;
  return session.report !== undefined && session.failedChains > 0;
}

function expectRerunWorks(input: string, out: string, originals: Map<string, string>): void {
  settle(input);
  const rerun = runCli(["compact", input, "--out", out, ...SPILL]);
  expect(rerun.status, rerun.stderr).toBe(0);
  expect(temporaryNames(path.dirname(out))).toEqual([]);
  expectEveryRefExact(out, originals);
}

/** `compact --out` under a file-size limit (KiB): write(2) stops part-way, then fails with EFBIG. */
function compactOutLimited(input: string, out: string, limitKiB: number, extra: string[] = []): FailedRun {
  const child = spawnSync("bash", ["-c", `ulimit -f ${limitKiB} && exec "$@"`, "bash", process.execPath, CLI, "compact", input, "--out", out, "--json", ...SPILL, ...extra], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", CHAINPRESS_DEBUG: "", PI_CODING_AGENT_DIR: NO_AGENT_DIR },
  });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

describe("--out is atomic", () => {
  const tmpfs = canMountTmpfs();

  it(
    tmpfs
      ? "a real full disk (a small tmpfs) mid-copy and mid-compaction: no file at the target, no temporary file, the input untouched; a rerun with room works"
      : "NO tmpfs can be mounted here (needs root on Linux): the full disk is stood in for by EFBIG from `ulimit -f` in the test below",
    () => {
      if (!tmpfs) return expect(tmpfs).toBe(false);
      const input = compactedThenGrown(tempDir());
      const inputHash = sha256(input);
      const originals = originalOutputs(input);
      const pages = (bytes: number) => Math.ceil(bytes / 4096) * 4096;
      const inputBlobs = blobDirFor(path.dirname(input), SESSION_ID);
      const earlierSpills = fs.readdirSync(inputBlobs).reduce((sum, name) => sum + pages(fs.statSync(path.join(inputBlobs, name)).size), 0);
      const copyRoom = pages(fs.statSync(input).size) + earlierSpills;
      // Nothing free; half the copy; the copy and its spill files, with one page to spare.
      const frees = [0, pages(fs.statSync(input).size / 2), copyRoom + 4096];
      const phases: string[] = [];
      for (const free of frees) {
        const mountDir = tempDir("chainpress-out-tmpfs-");
        expect(tryMountTmpfs(mountDir, "1m")).toBe(true);
        try {
          const out = path.join(mountDir, "copy.jsonl");
          fillTo(mountDir, free);
          const run = runCli(["compact", input, "--out", out, "--json", ...SPILL]);
          expectFailedCleanly({ status: run.status, stdout: run.out, stderr: run.stderr }, input, inputHash, out);
          phases.push(compactedBeforeFailing({ status: run.status, stdout: run.out, stderr: run.stderr }) ? "compaction" : `copy: ${run.stderr.trim()}`);
          fs.rmSync(path.join(mountDir, "filler.bin"));
          expectRerunWorks(input, out, originals);
        } finally {
          umount(mountDir);
        }
      }
      // The first two ran out of room while copying, the last while compacting.
      expect(phases[0]).toMatch(/^copy: .*(ENOSPC|no space left)/);
      expect(phases[1]).toMatch(/^copy: .*(ENOSPC|no space left)/);
      expect(phases[2]).toBe("compaction");
    },
    120_000,
  );

  it("EFBIG (`ulimit -f`) mid-copy and mid-compaction: no file at the target, no temporary file, the input untouched; a rerun works", () => {
    const input = compactedThenGrown(tempDir());
    const inputHash = sha256(input);
    const originals = originalOutputs(input);
    const inputKiB = Math.ceil(fs.statSync(input).size / 1024);
    const phases: string[] = [];
    // Half the input: the copy stops part-way. Just over it: the copy fits, the appends do not.
    for (const limit of [Math.floor(inputKiB / 2), inputKiB + 1]) {
      const out = path.join(tempDir(), "copy.jsonl");
      const run = compactOutLimited(input, out, limit);
      expectFailedCleanly(run, input, inputHash, out);
      phases.push(compactedBeforeFailing(run) ? "compaction" : `copy: ${run.stderr.trim()}`);
      expectRerunWorks(input, out, originals);
    }
    expect(phases[0]).toMatch(/^copy: .*(EFBIG|too large)/);
    expect(phases[1]).toBe("compaction");
  });

  it("a run killed mid-compaction leaves no file at the target; the rerun sweeps its temporary file and works", () => {
    const input = compactedThenGrown(tempDir());
    const inputHash = sha256(input);
    const originals = originalOutputs(input);
    const out = path.join(tempDir(), "copy.jsonl");
    const killed = runCli(["compact", input, "--out", out, ...SPILL], { env: { CHAINPRESS_CRASH_AT: "chain-appended:1" } });
    expect(killed.status).toBeNull();
    expect(fs.existsSync(out)).toBe(false);
    expect(sha256(input)).toBe(inputHash);
    // SIGKILL runs no handler: the temporary copy stays until the next run sweeps it.
    expect(temporaryNames(path.dirname(out)).filter((name) => name.startsWith(".copy.jsonl.chainpress-out-"))).toHaveLength(1);
    expectRerunWorks(input, out, originals);
  });

  it("SIGTERM while the copy is compacted: no file at the target, no temporary copy, no lock", async () => {
    const inputDir = tempDir();
    const input = path.join(inputDir, "input.jsonl");
    fs.copyFileSync(path.join(REPO_ROOT, "fixtures", "large-sessions", "default-session.jsonl"), input);
    settle(input);
    const inputHash = sha256(input);
    const outDir = tempDir();
    const out = path.join(outDir, "copy.jsonl");
    const child = spawn(process.execPath, [CLI, "compact", input, "--out", out, ...SPILL], { env: { ...process.env, NO_COLOR: "1", PI_CODING_AGENT_DIR: NO_AGENT_DIR }, stdio: "ignore" });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    // Signalled once the copy exists under any name: the run is then copying or compacting it.
    const started = () => fs.readdirSync(outDir).some((name) => name === "copy.jsonl" || name.startsWith(".copy.jsonl.chainpress-out-"));
    while (!started() && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
    child.kill("SIGTERM");
    expect(await exited).toBe(143);
    expect(fs.readdirSync(outDir).filter((name) => !name.endsWith("-blobs"))).toEqual([]);
    expect(sha256(input)).toBe(inputHash);
  });

  it("an existing target stays whole until a finished copy replaces it (--force), also when the run fails", () => {
    const input = compactedThenGrown(tempDir());
    const out = path.join(tempDir(), "copy.jsonl");
    fs.writeFileSync(out, "theirs\n");
    const refused = runCli(["compact", input, "--out", out, ...SPILL]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("already exists");
    expect(fs.readFileSync(out, "utf8")).toBe("theirs\n");
    // A forced run that fails mid-compaction (EFBIG on the appends) leaves the old file as it was.
    const failed = compactOutLimited(input, out, Math.ceil(fs.statSync(input).size / 1024) + 1, ["--force"]);
    expect(failed.status, failed.stderr).toBe(1);
    expect(fs.readFileSync(out, "utf8")).toBe("theirs\n");
    expect(temporaryNames(path.dirname(out))).toEqual([]);
    const forced = runCli(["compact", input, "--out", out, "--force", ...SPILL]);
    expect(forced.status, forced.stderr).toBe(0);
    expect(fs.readFileSync(out, "utf8")).not.toBe("theirs\n");
    expect(temporaryNames(path.dirname(out))).toEqual([]);
  });
});
