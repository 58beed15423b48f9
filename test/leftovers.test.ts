// Issue 11 item 7: what a killed run leaves behind. Real runs of the built CLI are killed at exact
// write points (CHAINPRESS_CRASH_AT); the next run sweeps the temporary files whose writer is
// dead, keeps those of a live writer, and the lock file has the session file's mode. A full disk
// while taking the lock (a real, tiny tmpfs) gives an error naming the lock file.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, removeTempDirs, runCli, settle, tempDir, writeSmallSession } from "./helpers/cli-harness.js";

beforeAll(ensureBuilt, 180_000);
afterAll(removeTempDirs);

const SESSION_ID = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";

describe("leftovers of a killed run", () => {
  it("a temporary spill file is swept once its writer is dead; the lock had the session's mode", () => {
    const dir = tempDir();
    const file = writeSmallSession(dir, "s.jsonl", { outputChars: 3000 });
    fs.chmodSync(file, 0o640);
    settle(file);
    const killed = runCli(["compact", file, "--workers", "0", "--spill-threshold", "1000"], { env: { CHAINPRESS_CRASH_AT: "spill-written:1" } });
    expect(killed.status).toBeNull();
    const blobDir = path.join(dir, `${SESSION_ID}-blobs`);
    // Killed after the first spill file's fsync: its batch's temporary files are all there.
    const temps = fs.readdirSync(blobDir).filter((name) => name.startsWith(".tmp-"));
    expect(temps.length).toBeGreaterThanOrEqual(1);
    expect(fs.statSync(`${file}.chainpress.lock`).mode & 0o777).toBe(0o640);

    // A temporary file of a writer that is alive (this test process) must survive the sweep.
    const live = `.tmp-${process.pid}-0-deadbeef-live.txt`;
    fs.writeFileSync(path.join(blobDir, live), "in progress");
    settle(file);
    const next = runCli(["compact", file, "--workers", "0", "--spill-threshold", "1000"]);
    expect(next.status, next.stderr).toBe(0);
    expect(next.out).toContain(`removed ${temps.length} leftover temporary file(s) of a killed run`);
    expect(fs.readdirSync(blobDir).filter((name) => name.startsWith(".tmp-"))).toEqual([live]);
  });

  it("a temporary session copy of a killed migration is swept once its writer is dead", () => {
    const dir = tempDir();
    const file = writeSmallSession(dir, "s.jsonl", {}, (lines) => `${[lines[0]!.replace('"version":3', '"version":2'), ...lines.slice(1)].join("\n")}\n`);
    const killed = runCli(["compact", file, "--workers", "0"], { env: { CHAINPRESS_CRASH_AT: "atomic-temp-written:1" } });
    expect(killed.status).toBeNull();
    const copies = () => fs.readdirSync(dir).filter((name) => name.startsWith(".s.jsonl.chainpress-tmp-"));
    expect(copies()).toHaveLength(1);
    settle(file);
    const next = runCli(["compact", file, "--workers", "0"]);
    expect(next.status, next.stderr).toBe(0);
    expect(copies()).toEqual([]);
  });
});

/** A 256 KiB tmpfs, or undefined where mounting is not allowed (not root, no CAP_SYS_ADMIN). */
function mountTinyFs(): string | undefined {
  const dir = tempDir("chainpress-full-");
  const result = spawnSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", dir]);
  return result.status === 0 ? dir : undefined;
}

describe("a full disk while taking the lock", () => {
  const mounted = mountTinyFs();
  afterAll(() => {
    if (mounted) spawnSync("umount", [mounted]);
  });

  it.skipIf(!mounted)("the error names the lock file", () => {
    const dir = mounted!;
    const file = writeSmallSession(dir, "s.jsonl", { chains: 1 });
    // Fill every remaining block.
    const fd = fs.openSync(path.join(dir, "filler"), "w");
    try {
      for (;;) fs.writeSync(fd, Buffer.alloc(4096, 1));
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
    } finally {
      fs.closeSync(fd);
    }
    const run = runCli(["compact", file, "--workers", "0"]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`${file}.chainpress.lock: cannot take the session lock: ENOSPC`);
    expect(fs.existsSync(`${file}.chainpress.lock`)).toBe(false);
  });
});
