/**
 * Hostile paths, with real filesystem objects: `--out`, lock files, backups and spill files that
 * are FIFOs, device nodes (as root), symbolic or hard links, are refused promptly and left as they
 * are; a crafted `spillPath` costs the query one refusal, never a hang or an unbounded read; entry
 * kinds chainpress does not know are said once per kind.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadHasher, type Hasher } from "../src/core/digest.js";
import { writeFileAtomic } from "../src/io/atomic-write.js";
import { readSpilledBody } from "../src/io/read-spill.js";
import { NotRegularFileError } from "../src/io/regular-file.js";
import { acquireSessionLock } from "../src/io/session-lock.js";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";
import { spillRecord } from "./helpers/spill-record.js";
import { ensureBuilt, removeTempDirs, runCli, sha256, tempDir, writeSmallSession, type CliResult } from "./helpers/cli-harness.js";

const isRoot = process.getuid?.() === 0;

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

function mkfifo(file: string): string {
  const made = spawnSync("mkfifo", [file]);
  if (made.status !== 0) throw new Error(`mkfifo ${file}: ${made.stderr}`);
  return file;
}

/** A character device with /dev/null's numbers, made in a scratch folder (root only). */
function mknodNull(file: string): string {
  const made = spawnSync("mknod", [file, "c", "1", "3"]);
  if (made.status !== 0) throw new Error(`mknod ${file}: ${made.stderr}`);
  return file;
}

/** The CLI, killed if it has not answered in 10 s: a hang fails the test (status null) rather than the suite. */
function timedCli(args: string[]): CliResult {
  return runCli(args, { timeoutMs: 10_000 });
}

function expectRefused(run: CliResult, ...words: string[]): void {
  expect(run.status).toBe(1);
  for (const word of words) expect(run.stderr).toContain(word);
  expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
}

describe("compact --out onto something that is not a regular file", () => {
  it("a FIFO is refused at once, with or without --force, and stays a FIFO", () => {
    const dir = tempDir();
    const input = writeSmallSession(dir);
    const before = sha256(input);
    const fifo = mkfifo(path.join(dir, "out.fifo"));
    for (const force of [[], ["--force"]]) {
      const run = timedCli(["compact", input, "--out", fifo, "--workers", "0", ...force]);
      expectRefused(run, `${fifo}: --out is a FIFO, not a regular file`);
      expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    }
    expect(sha256(input)).toBe(before);
  });

  it.runIf(isRoot)("a character device is refused with --force, and is not deleted", () => {
    const dir = tempDir();
    const input = writeSmallSession(dir);
    const device = mknodNull(path.join(dir, "null"));
    const run = timedCli(["compact", input, "--out", device, "--force", "--workers", "0"]);
    expectRefused(run, `${device}: --out is a character device, not a regular file`);
    const after = fs.lstatSync(device);
    expect(after.isCharacterDevice()).toBe(true);
    expect(after.rdev).toBe(fs.statSync("/dev/null").rdev);
  });

  it("a folder and a symbolic link to another file are refused; neither changes", () => {
    const dir = tempDir();
    const input = writeSmallSession(dir);
    const folder = path.join(dir, "folder");
    fs.mkdirSync(folder);
    const other = path.join(dir, "other.txt");
    fs.writeFileSync(other, "keep me\n");
    const link = path.join(dir, "link.jsonl");
    fs.symlinkSync(other, link);
    expectRefused(timedCli(["compact", input, "--out", folder, "--force"]), `${folder}: --out is a directory`);
    expectRefused(timedCli(["compact", input, "--out", link, "--force"]), `${link}: --out is a symbolic link`);
    expect(fs.readFileSync(other, "utf8")).toBe("keep me\n");
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
  });
});

describe("compact --out that names the input", () => {
  it("the same path, a symbolic link and a hard link to the input are refused; the input stays byte-identical", () => {
    const dir = tempDir();
    const input = writeSmallSession(dir);
    const before = sha256(input);
    const symlink = path.join(dir, "alias.jsonl");
    fs.symlinkSync(input, symlink);
    const hardlink = path.join(dir, "hard.jsonl");
    fs.linkSync(input, hardlink);
    for (const out of [input, path.join(dir, ".", path.basename(input)), symlink, hardlink]) {
      const run = timedCli(["compact", input, "--out", out, "--force", "--workers", "0"]);
      expectRefused(run, `${out}: --out is the input`);
      expect(sha256(input)).toBe(before);
    }
    expect(fs.readdirSync(dir).filter((name) => name.endsWith("-blobs") || name.endsWith(".lock"))).toEqual([]);
  });

  it("a file inside the input's spill folder is refused", () => {
    const dir = tempDir();
    const input = writeSmallSession(dir, "s.jsonl", { outputChars: 70_000 });
    expect(runCli(["compact", input, "--workers", "0"]).status).toBe(0);
    const blobDir = path.join(dir, `${"aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"}-blobs`);
    expect(fs.statSync(blobDir).isDirectory()).toBe(true);
    const out = path.join(blobDir, "copy.jsonl");
    expectRefused(timedCli(["compact", input, "--out", out]), `${out}: --out lies inside the input's spill folder`);
    expect(fs.existsSync(out)).toBe(false);
  });

  it("takes the input's lock too: a held lock on the input refuses the copy", () => {
    const dir = tempDir();
    const input = writeSmallSession(dir);
    const lock = acquireSessionLock(input);
    try {
      const out = path.join(dir, "copy.jsonl");
      expectRefused(timedCli(["compact", input, "--out", out, "--workers", "0"]), `${input}: locked by another chainpress`);
      expect(fs.existsSync(out)).toBe(false);
    } finally {
      lock.release();
    }
  });
});

describe("the files compact writes beside the session", () => {
  it("a FIFO where the session lock goes is refused, not judged stale and removed", () => {
    const dir = tempDir();
    const input = writeSmallSession(dir);
    const before = sha256(input);
    const fifo = mkfifo(`${input}.chainpress.lock`);
    const run = timedCli(["compact", input, "--workers", "0"]);
    expectRefused(run, `${fifo}: session lock is a FIFO`);
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    expect(sha256(input)).toBe(before);
  });

  it("a FIFO where --repair's .bak goes is refused even with --force", () => {
    const dir = tempDir();
    const input = writeSmallSession(dir, "s.jsonl", {}, (lines) => `${lines.join("\n")}\n{"broken\n`);
    const fifo = mkfifo(`${input}.bak`);
    const run = timedCli(["compact", input, "--repair", "--force", "--workers", "0"]);
    expectRefused(run, `${fifo}: backup is a FIFO`);
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
  });

  it("an atomic replace refuses a target that is not a regular file", async () => {
    const dir = tempDir();
    const fifo = mkfifo(path.join(dir, "target"));
    await expect(writeFileAtomic(fifo, ["text"], { role: "session" })).rejects.toBeInstanceOf(NotRegularFileError);
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    expect(fs.readdirSync(dir)).toEqual(["target"]);
  });

  it("the input itself as a FIFO is refused by every command without opening it", () => {
    const dir = tempDir();
    const fifo = mkfifo(path.join(dir, "s.jsonl"));
    expectRefused(timedCli(["compact", fifo]), `${fifo}: not a regular file`);
    for (const command of ["render", "stats"]) expectRefused(timedCli([command, fifo]), `${fifo}: is a FIFO, not a regular file`);
    expectRefused(timedCli(["query", fifo, "t1"]), `${fifo}: is a FIFO, not a regular file`);
  });
});

describe("reading a spill file is bounded", () => {
  let hasher: Hasher;
  beforeAll(async () => {
    hasher = await loadHasher();
  });

  // A digest, so that the file is what decides (a record without one is never read).
  const record = (spillPath: string, spillBytes?: number) => spillRecord(spillPath, { spillDigest: "xxh64:0000000000000000", ...(spillBytes === undefined ? {} : { spillBytes }) });
  /** A session's blob folder, where spill files are read. */
  const blobFolder = (): string => {
    const blobs = path.join(tempDir(), "s-blobs");
    fs.mkdirSync(blobs);
    return blobs;
  };

  async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
    const started = performance.now();
    const value = await work();
    return { value, ms: performance.now() - started };
  }

  it("a FIFO is refused without blocking, even with no writer", async () => {
    const blobs = blobFolder();
    const fifo = mkfifo(path.join(blobs, "blob.txt"));
    const { value, ms } = await timed(() => readSpilledBody(record(fifo, 10), hasher, blobs));
    expect(value).toEqual({ ok: false, reason: "unreadable", detail: `spill file ${fifo} is a FIFO, not a regular file` });
    expect(ms).toBeLessThan(1000);
  });

  it("/dev/zero is refused without reading it, with or without a recorded length", async () => {
    const blobs = blobFolder();
    for (const spillBytes of [10, undefined]) {
      const { value, ms } = await timed(() => readSpilledBody(record("/dev/zero", spillBytes), hasher, blobs));
      expect(value).toMatchObject({ ok: false, reason: "refused", detail: 'record call_1@1: spill path "/dev/zero" is not a file of the session\'s blob folder s-blobs; refused, nothing read' });
      expect(ms).toBeLessThan(1000);
    }
  });

  it("a symbolic link at the spill path is not followed", async () => {
    const dir = blobFolder();
    fs.writeFileSync(path.join(dir, "real.txt"), "0123456789");
    const link = path.join(dir, "blob.txt");
    fs.symlinkSync(path.join(dir, "real.txt"), link);
    expect(await readSpilledBody(record(link, 10), hasher, dir)).toMatchObject({ ok: false, reason: "unreadable", detail: `spill file ${link} is a symbolic link, not a regular file` });
  });

  it("a file larger than its record is damaged, found without reading it all", async () => {
    const blobs = blobFolder();
    const file = path.join(blobs, "blob.txt");
    fs.writeFileSync(file, "x".repeat(1000));
    fs.truncateSync(file, 8 * 1024 * 1024 * 1024); // sparse: 8 GiB that take no disk
    const { value, ms } = await timed(() => readSpilledBody(record(file, 1000), hasher, blobs));
    expect(value).toMatchObject({ ok: false, reason: "corrupt", detail: `spill file ${file} has ${8 * 1024 * 1024 * 1024} bytes, expected 1000` });
    expect(ms).toBeLessThan(1000);
  });

  it("`chainpress query` answers a FIFO or a device at a spill path at once with the preview and the reason", () => {
    const dir = tempDir();
    const input = writeSmallSession(dir, "s.jsonl", { outputChars: 70_000, chains: 2 });
    expect(runCli(["compact", input, "--workers", "0"]).status).toBe(0);
    const blobDir = path.join(dir, "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee-blobs");
    const [first, second] = fs.readdirSync(blobDir).sort().map((name) => path.join(blobDir, name));
    fs.rmSync(first!);
    mkfifo(first!);
    fs.rmSync(second!);
    fs.symlinkSync("/dev/zero", second!);
    const refs = ["t1", "t2", "t3", "t4"];
    const run = timedCli(["query", input, ...refs]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`spill file ${first} is a FIFO, not a regular file`);
    expect(run.stderr).toContain(`spill file ${second} is a symbolic link, not a regular file`);
    // The record's preview stands in for the output it could not read.
    expect(run.out).toContain("out 0 0 xxx");
    expect(run.out).toContain("out 0 1 xxx");
    expect(fs.lstatSync(first!).isFIFO()).toBe(true);
  });
});

describe("the extension's context_tree_query on a crafted spill path", () => {
  it("answers at once with the preview and the reason", async () => {
    const dir = tempDir();
    const input = writeSmallSession(dir, "s.jsonl", { outputChars: 70_000, chains: 2 });
    expect(runCli(["compact", input, "--workers", "0"]).status).toBe(0);
    const blobDir = path.join(dir, "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee-blobs");
    const first = path.join(blobDir, fs.readdirSync(blobDir).sort()[0]!);
    fs.rmSync(first);
    mkfifo(first);
    const host = await PiHost.start(SessionManager.open(input), tempAgentDir());
    const started = performance.now();
    const result = await host.tools.get("context_tree_query")!.execute("q1", { toolCallIds: ["t1"] });
    expect(performance.now() - started).toBeLessThan(1000);
    const text = result.content[0]!.text;
    expect(text).toContain("out 0 0 xxx");
    expect(text).toContain(`spill file ${first} is a FIFO, not a regular file`);
  });
});

describe("entry kinds chainpress does not know", () => {
  it("get one warning per kind, naming the first line, on stderr and in the compact report", () => {
    const dir = tempDir();
    const input = writeSmallSession(dir, "s.jsonl", {}, (lines) => {
      const last = JSON.parse(lines[lines.length - 1]!) as { id: string };
      const extra = [1, 2, 3].map((n) => JSON.stringify({ type: "frobnicate", id: `f${n}`, parentId: n === 1 ? last.id : `f${n - 1}`, timestamp: "2026-01-02T00:00:00.000Z" }));
      const other = JSON.stringify({ type: "hologram", id: "h1", parentId: "f3", timestamp: "2026-01-02T00:00:00.000Z" });
      return `${[...lines, ...extra, other].join("\n")}\n`;
    });
    const firstLine = 1 + 3 * 6 + 1; // after the header and three chains of six messages
    const stats = runCli(["stats", input]);
    expect(stats.status).toBe(0);
    const warnings = stats.stderr.split("\n").filter((line) => line.includes("unknown type"));
    expect(warnings).toEqual([
      `chainpress: warning: ${input}:${firstLine}: 3 entries of unknown type "frobnicate" passed over (chainpress may be older than the pi that wrote them)`,
      `chainpress: warning: ${input}:${firstLine + 3}: 1 entry of unknown type "hologram" passed over (chainpress may be older than the pi that wrote them)`,
    ]);
    const compact = runCli(["compact", input, "--json", "--workers", "0"]);
    expect(compact.status).toBe(0);
    const report = (JSON.parse(compact.out) as { sessions: Array<{ report: { warnings: string[] } }> }).sessions[0]!.report;
    expect(report.warnings.filter((w) => w.includes("unknown type"))).toHaveLength(2);
  });

  it("are named in /pruner status", async () => {
    const dir = tempDir();
    const input = writeSmallSession(dir, "s.jsonl", {}, (lines) => {
      const last = JSON.parse(lines[lines.length - 1]!) as { id: string };
      return `${[...lines, JSON.stringify({ type: "frobnicate", id: "f1", parentId: last.id, timestamp: "2026-01-02T00:00:00.000Z" })].join("\n")}\n`;
    });
    const host = await PiHost.start(SessionManager.open(input), tempAgentDir());
    await host.command("/pruner status");
    await host.idle();
    const status = host.notices.map((n) => n.message).join("\n");
    expect(status).toContain('warning: 1 entry of unknown type "frobnicate" passed over');
  });

  it("pi's own kinds get none", () => {
    const dir = tempDir();
    const input = writeSmallSession(dir, "s.jsonl", {}, (lines) => {
      const last = JSON.parse(lines[lines.length - 1]!) as { id: string };
      const usage = JSON.stringify({ type: "usage", id: "u1", parentId: last.id, timestamp: "2026-01-02T00:00:00.000Z", kind: "cache_warm" });
      const label = JSON.stringify({ type: "label", id: "l1", parentId: "u1", timestamp: "2026-01-02T00:00:00.000Z", targetId: last.id, label: "x" });
      return `${[...lines, usage, label].join("\n")}\n`;
    });
    const stats = runCli(["stats", input]);
    expect(stats.status).toBe(0);
    expect(stats.stderr).not.toContain("unknown type");
  });
});
