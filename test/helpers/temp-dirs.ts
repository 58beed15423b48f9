/**
 * Temporary folders for tests, made in the OS's temp folder and removed by `removeTempDirs`
 * (a test file calls it from afterAll or afterEach). One definition for every test file.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const dirs: string[] = [];

export function tempDir(prefix = "chainpress-test-"): string {
  return keepTempDir(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

/** Registers a folder made elsewhere (an agent folder, say) for removal with the others. */
export function keepTempDir(dir: string): string {
  dirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}
