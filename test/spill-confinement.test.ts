/**
 * The archive stays inside the session's own blob folder, with real files, links and folders:
 * spill files are never written through a blob folder that is a symbolic link (checked where
 * the folder is made and again where the files are placed), never replace another output's file
 * (two sessions with the same id in one folder), and are read only as `<blob folder>/<name>`,
 * whatever path a record names: a forged index entry cannot make `query`, `--raw`, `--offset`,
 * `--search`, `render` or context_tree_query show any other file, a moved session never reads
 * its old place, and a record with nothing to verify its file against is shown as its preview.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadHasher, spillDigestOf } from "../src/core/digest.js";
import { settleSpillFiles, stageSpillFiles } from "../src/io/write-spill.js";
import { ensureBuilt, removeTempDirs, runCli, settle, sha256, tempDir, writeSmallSession } from "./helpers/cli-harness.js";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";

const SESSION_ID = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
const BLOBS = `${SESSION_ID}-blobs`;
/** Two chains of two outputs, each over the default spill threshold: refs t1..t4 are spilled. */
const SPILLING = { outputChars: 70_000, chains: 2 };
const SECRET = `TOP-SECRET ${"s".repeat(200)}\n`;
/** The preview each spilled ref keeps (its output's head). */
const PREVIEW: Record<string, string> = { t1: "out 0 0 xxx", t2: "out 0 1 xxx", t3: "out 1 0 xxx", t4: "out 1 1 xxx" };

/** `render` with chain compression off: every archived output is a stub naming its spill file. */
function renderStubs(file: string): string {
  const run = runCli(["render", file], { env: { PI_CODING_AGENT_DIR: tempAgentDir({ chainCompression: { enabled: false } }) } });
  expect(run.status, run.stderr).toBe(0);
  return run.out;
}

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

interface CompactJson {
  status: number | null;
  skipped: Array<{ reason: string; cause?: string }>;
  stderr: string;
}

/** `workers`: "0" stages spill files on the main thread, "2" on a worker thread (the reason then crosses threads). */
function compact(file: string, workers = "0"): CompactJson {
  settle(file);
  const run = runCli(["compact", file, "--json", "--workers", workers]);
  const session = run.out.trim().startsWith("{") ? JSON.parse(run.out).sessions[0] : undefined;
  return { status: run.status, skipped: session?.report?.skipped?.chains ?? [], stderr: run.stderr };
}

function compacted(dir: string, name = "s.jsonl", options: Parameters<typeof writeSmallSession>[2] = SPILLING): string {
  const file = writeSmallSession(dir, name, options);
  const run = compact(file);
  expect(run.status, run.stderr).toBe(0);
  return file;
}

/** The session file's index records, each with the line it is on. */
function indexRecords(file: string): Array<{ line: number; index: number; record: Record<string, unknown> }> {
  const found: Array<{ line: number; index: number; record: Record<string, unknown> }> = [];
  fs.readFileSync(file, "utf8")
    .split("\n")
    .forEach((text, line) => {
      if (!text.includes('"context-prune-index"')) return;
      const entry = JSON.parse(text);
      (entry.data.toolCalls as Array<Record<string, unknown>>).forEach((record, index) => found.push({ line, index, record }));
    });
  return found;
}

/** Rewrites the n-th archived record (0-based, file order) in the session file, as a hand edit would. */
function forgeRecord(file: string, n: number, change: (record: Record<string, unknown>) => void): Record<string, unknown> {
  const target = indexRecords(file)[n]!;
  const lines = fs.readFileSync(file, "utf8").split("\n");
  const entry = JSON.parse(lines[target.line]!);
  change(entry.data.toolCalls[target.index]);
  lines[target.line] = JSON.stringify(entry);
  fs.writeFileSync(file, lines.join("\n"));
  settle(file);
  return entry.data.toolCalls[target.index];
}

function listing(dir: string): Record<string, string> {
  return Object.fromEntries(fs.readdirSync(dir).map((name) => [name, sha256(path.join(dir, name))]));
}

describe("writing: the blob folder is a real folder in the session's folder", () => {
  it.each(["0", "2"])("a blob folder that is a symbolic link is not written through, nor swept: the chains that spill fail as spill-refused (workers %s)", (workers) => {
    // Where the spill files would go: learnt from the same session compacted elsewhere.
    const names = fs.readdirSync(path.join(path.dirname(compacted(tempDir())), BLOBS));
    expect(names).toHaveLength(4);
    const elsewhere = tempDir();
    for (const name of names) fs.writeFileSync(path.join(elsewhere, name), "another file, not chainpress's\n");
    // Named as a killed run's temporary spill file (a pid no process has): a sweep would remove it.
    fs.writeFileSync(path.join(elsewhere, `.tmp-4194303-0-0123abcd-${names[0]}`), "not a leftover of this session\n");
    const before = listing(elsewhere);

    const dir = tempDir();
    const file = writeSmallSession(dir, "s.jsonl", SPILLING);
    fs.symlinkSync(elsewhere, path.join(dir, BLOBS));
    const run = compact(file, workers);
    expect(run.status).toBe(1);
    expect(run.skipped).toHaveLength(2);
    for (const skip of run.skipped) {
      expect(skip.reason).toBe("spill-refused");
      expect(skip.cause).toContain(`${path.join(dir, BLOBS)}: spill folder is a symbolic link, not a folder`);
    }
    expect(listing(elsewhere)).toEqual(before);
    expect(fs.lstatSync(path.join(dir, BLOBS)).isSymbolicLink()).toBe(true);
    expect(indexRecords(file)).toEqual([]);
  });

  it("a blob folder replaced by a link between staging and settling: nothing is placed through it", async () => {
    const dir = tempDir();
    const blobDir = path.join(dir, "s-blobs");
    const spill = { blobDir, fileMode: 0o600, dirMode: 0o700 };
    const staged = stageSpillFiles(spill, [{ fileName: "out.txt", bytes: Buffer.from("the output") }]);
    // The real folder goes elsewhere, and a link to it takes its name.
    const moved = path.join(tempDir(), "moved");
    fs.renameSync(blobDir, moved);
    fs.symlinkSync(moved, blobDir);
    await expect(settleSpillFiles(spill, staged)).rejects.toMatchObject({ reason: "spill-refused", message: `${blobDir}: spill folder is a symbolic link, not a folder; chainpress writes nothing through it and leaves it as it is` });
    expect(fs.readdirSync(moved).filter((name) => !name.startsWith(".tmp-"))).toEqual([]);
  });

  it("a sessions folder reached through a link (higher up) works as before, from either path", () => {
    const real = tempDir();
    const link = path.join(tempDir(), "sessions-link");
    fs.symlinkSync(real, link);
    const viaLink = compacted(link);
    expect(fs.readdirSync(path.join(real, BLOBS))).toHaveLength(4);
    const viaReal = path.join(real, "s.jsonl");
    for (const file of [viaLink, viaReal]) {
      const run = runCli(["query", file, "t1", "--raw"]);
      expect(run.status, run.stderr).toBe(0);
      expect(run.out.startsWith("out 0 0 xxx")).toBe(true);
    }
    // The stub names the recorded file, which is the same file from either path.
    const recorded = indexRecords(viaLink)[0]!.record.spillPath as string;
    expect(recorded.startsWith(link)).toBe(true);
    expect(renderStubs(viaReal)).toContain(`It is also in the file ${recorded}.`);
  });
});

describe("writing: a spill file is never replaced by other bytes", () => {
  it("a second session with the same id in the folder fails closed and leaves the first one's files alone", () => {
    const dir = tempDir();
    const first = compacted(dir, "first.jsonl");
    const blobs = path.join(dir, BLOBS);
    const before = listing(blobs);
    // A hand-edited copy: same id, same calls, other outputs.
    const second = writeSmallSession(dir, "second.jsonl", SPILLING, (lines) => `${lines.join("\n").replaceAll("xxxxxxxxxx", "yyyyyyyyyy")}\n`);
    const run = compact(second);
    expect(run.status).toBe(1);
    expect(run.skipped).toHaveLength(2);
    for (const skip of run.skipped) {
      expect(skip.reason).toBe("spill-refused");
      expect(skip.cause).toMatch(/spill file .* already holds another output; .*a second session with the same id in this folder/);
    }
    expect(listing(blobs)).toEqual(before);
    const query = runCli(["query", first, "t1", "t2", "t3", "t4"]);
    expect(query.status, query.stderr).toBe(0);

    // A byte-identical copy (as a rerun after a crash finds its own files): the files are kept, the chains compress.
    const same = writeSmallSession(dir, "same.jsonl", SPILLING);
    const again = compact(same);
    expect(again.status, again.stderr).toBe(0);
    expect(listing(blobs)).toEqual(before);
  });
});

describe("reading: a spill file is read only inside the session's own blob folder", () => {
  let dir = "";
  let file = "";
  let secretFile = "";
  let normalPath = "";

  beforeAll(async () => {
    dir = tempDir();
    file = compacted(dir);
    secretFile = path.join(tempDir(), "secret.txt");
    fs.writeFileSync(secretFile, SECRET);
    const digest = spillDigestOf(await loadHasher(), Buffer.from(SECRET));
    // Records t1..t3 name the secret three ways, each with its exact size and digest; t4 stays as written.
    const climbing = [dir, BLOBS, "..", "..", path.basename(path.dirname(secretFile)), "secret.txt"].join(path.sep);
    const forged = [secretFile, climbing, path.relative(dir, secretFile)];
    forged.forEach((spillPath, n) =>
      forgeRecord(file, n, (record) => {
        record.spillPath = spillPath;
        record.spillBytes = SECRET.length;
        record.spillDigest = digest;
        delete record.contentHash;
      }),
    );
    normalPath = indexRecords(file)[3]!.record.spillPath as string;
  });

  it("query, --raw and --offset refuse a record that names another file, naming the record, and show its preview", () => {
    for (const ref of ["t1", "t2", "t3"]) {
      const run = runCli(["query", file, ref]);
      expect(run.status).toBe(1);
      expect(run.out).not.toContain("TOP-SECRET");
      expect(run.out).toContain("Status: OUTPUT UNAVAILABLE");
      expect(run.out).toContain(PREVIEW[ref]);
      expect(run.stderr).toMatch(new RegExp(`${ref}: refused output: record call_\\d_\\d@\\d+: spill path .* is not a file of the session's blob folder ${BLOBS}; refused, nothing read`));
      const raw = runCli(["query", file, ref, "--raw"]);
      expect(raw.status).toBe(1);
      expect(raw.stdout.length).toBe(0);
      const page = runCli(["query", file, ref, "--offset", "1"]);
      expect(page.status).toBe(1);
      expect(page.out + page.stderr).not.toContain("TOP-SECRET");
      expect(page.stderr).toContain("refused, nothing read");
    }
  });

  it("--search does not search the file a forged record names", () => {
    const run = runCli(["query", file, "--search", "TOP-SECRET"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.out).not.toContain("TOP-SECRET s");
    for (const ref of ["t1", "t2", "t3"]) expect(run.stderr).toContain(`${ref}: not searched:`);
  });

  it("render shows no forged path, and the recorded path of an honest record as it always did", () => {
    const stubs = renderStubs(file)
      .split("\n")
      .filter((line) => line.includes('"role":"toolResult"'));
    expect(stubs).toHaveLength(4);
    for (const stub of stubs.slice(0, 3)) {
      expect(stub).not.toContain("secret.txt");
      expect(stub).not.toContain("It is also in the file");
    }
    expect(stubs[3]).toContain(`It is also in the file ${normalPath}.`);
  });

  it("context_tree_query, by ref, page and search, shows the preview and why", async () => {
    const host = await PiHost.start(SessionManager.open(file), tempAgentDir());
    const tool = host.tools.get("context_tree_query")!;
    const text = (await tool.execute("q1", { toolCallIds: ["t1", "t4"] }, undefined, undefined, host.ctx())).content[0]!.text;
    expect(text).not.toContain("TOP-SECRET");
    expect(text).toContain("refused, nothing read");
    expect(text).toContain("out 0 0 xxx");
    await expect(tool.execute("q2", { toolCallIds: ["t1"], offset: "1" }, undefined, undefined, host.ctx())).rejects.toThrow(/refused, nothing read/);
    const search = (await tool.execute("q3", { search: "TOP-SECRET" }, undefined, undefined, host.ctx())).content[0]!.text;
    expect(search).not.toContain("TOP-SECRET s");
  });
});

describe("reading: what cannot be verified or is not where it should be", () => {
  it("a record with neither digest nor content hash is shown as its preview, even with the right file in place", () => {
    const dir = tempDir();
    const file = compacted(dir);
    forgeRecord(file, 0, (record) => {
      delete record.spillDigest;
      delete record.contentHash;
    });
    const run = runCli(["query", file, "t1"]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("t1: unverifiable output: record call_0_0@");
    expect(run.out).toContain("Status: OUTPUT UNAVAILABLE");
    expect(run.out).not.toContain("x".repeat(60_000));
    expect(runCli(["query", file, "t1", "--raw"]).stdout.length).toBe(0);
  });

  it("a moved session reads its spill files in its blob folder now, never at the recorded old path", () => {
    const parent = tempDir();
    const oldDir = path.join(parent, "old");
    fs.mkdirSync(oldDir);
    const oldFile = compacted(oldDir);
    const names = fs.readdirSync(path.join(oldDir, BLOBS));
    const newDir = path.join(parent, "new");
    fs.renameSync(oldDir, newDir);
    // Files of the right size, other bytes, at the recorded places.
    fs.mkdirSync(path.join(oldDir, BLOBS), { recursive: true });
    for (const name of names) fs.writeFileSync(path.join(oldDir, BLOBS, name), "z".repeat(fs.statSync(path.join(newDir, BLOBS, name)).size));
    const file = path.join(newDir, path.basename(oldFile));
    const run = runCli(["query", file, "t1", "--raw"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.out.startsWith("out 0 0 xxx")).toBe(true);
    // The stubs point at the files that are read.
    const rendered = renderStubs(file);
    expect(rendered).toContain(path.join(newDir, BLOBS, names[0]!));
    expect(rendered).not.toContain(path.join(oldDir, BLOBS));
  });

  it("a blob folder that is a symbolic link is not read through", () => {
    const dir = tempDir();
    const file = compacted(dir);
    const elsewhere = path.join(tempDir(), "blobs-elsewhere");
    fs.renameSync(path.join(dir, BLOBS), elsewhere);
    fs.symlinkSync(elsewhere, path.join(dir, BLOBS));
    const run = runCli(["query", file, "t1"]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`t1: refused output: blob folder ${path.join(dir, BLOBS)} is a symbolic link, not a folder; refused, nothing read`);
    expect(run.out).toContain("out 0 0 xxx");
  });
});

/** A tmpfs of `size` at `dir`: needs root and CAP_SYS_ADMIN (as test/fault-injection.test.ts). */
function mountTmpfs(dir: string, size: string): boolean {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
  return spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0755`, "tmpfs", dir]).status === 0;
}

const probeDir = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-tmpfs-probe-"));
const CAN_MOUNT = mountTmpfs(probeDir, "64k");
if (CAN_MOUNT) spawnSync("umount", [probeDir]);
fs.rmSync(probeDir, { recursive: true, force: true });

describe.runIf(CAN_MOUNT)("the report's reason for a full disk (a real ENOSPC on a tiny tmpfs)", () => {
  it("chains whose spill files do not fit are skipped as disk-full, not no-summary", () => {
    const dir = tempDir();
    expect(mountTmpfs(dir, "1m")).toBe(true);
    try {
      const file = writeSmallSession(dir, "s.jsonl", SPILLING);
      // Room for the lock and the index entries, not for 280 KB of spill files.
      const filler = path.join(dir, "filler.bin");
      const fd = fs.openSync(filler, "w");
      try {
        for (;;) fs.writeSync(fd, Buffer.alloc(4096, 0x61));
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
      } finally {
        fs.closeSync(fd);
      }
      fs.truncateSync(filler, Math.max(0, fs.statSync(filler).size - 96 * 1024));
      const run = compact(file);
      expect(run.status, run.stderr).toBe(1);
      expect(run.skipped.length).toBeGreaterThan(0);
      for (const skip of run.skipped) {
        expect(skip.cause).toMatch(/ENOSPC|no space left/);
        expect(skip.reason).toBe("disk-full");
      }
    } finally {
      spawnSync("umount", [dir]);
    }
  });
});
