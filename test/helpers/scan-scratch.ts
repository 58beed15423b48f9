/**
 * What scan tests share: pools of a given size and session files in temporary folders, all
 * closed and removed when the test file ends.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { createChainRunner, type ChainRunner } from "../../src/main/chain-runner.js";

export interface ScanScratch {
  runner(workers: number): ChainRunner;
  /** A fresh folder holding `content` as `s.jsonl`; returns the file's path. */
  writeTemp(content: string | Buffer): string;
}

/** Call at the top of a test file: registers the cleanup with `afterAll`. */
export function scanScratch(prefix: string): ScanScratch {
  const runners: ChainRunner[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(runners.map((r) => r.close()));
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    runner(workers) {
      const made = createChainRunner(workers);
      runners.push(made);
      return made;
    },
    writeTemp(content) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
      dirs.push(dir);
      const file = path.join(dir, "s.jsonl");
      fs.writeFileSync(file, content);
      return file;
    },
  };
}
