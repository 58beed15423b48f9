/**
 * A real full disk for tests: a tiny tmpfs, mounted where the machine allows it (Linux, root),
 * filled to a chosen number of free bytes. Where mounting is impossible, callers fall back to a
 * file-size limit (`ulimit -f`, EFBIG) and say so in the test's title.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export function tryMountTmpfs(dir: string, size: string): boolean {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0755`, "tmpfs", dir], { encoding: "utf8" });
  return mounted.status === 0;
}

export function umount(dir: string): void {
  spawnSync("umount", [dir]);
}

/** Whether this machine lets a test mount a tmpfs (probed once, on a throw-away folder). */
export function canMountTmpfs(): boolean {
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-tmpfs-probe-"));
  try {
    const mounted = tryMountTmpfs(probe, "64k");
    if (mounted) umount(probe);
    return mounted;
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
}

/** Fills the file system at `dir` (with `dir/filler.bin`) until only about `freeBytes` are left. */
export function fillTo(dir: string, freeBytes: number): void {
  const filler = path.join(dir, "filler.bin");
  const fd = fs.openSync(filler, "w");
  const chunk = Buffer.alloc(4096, 0x61);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    fs.closeSync(fd);
  }
  const size = fs.statSync(filler).size;
  fs.truncateSync(filler, Math.max(0, size - freeBytes));
}
