/** What a benchmark ran on (machine) and what it measured (source), stored with every result. */

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  totalMemGb: number;
  node: string;
  platform: string;
  /** 1-minute load average when the run started. */
  loadAvgAtStart: number;
}

export function machineInfo(): MachineInfo {
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? "unknown",
    totalMemGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    loadAvgAtStart: os.loadavg()[0]!,
  };
}

export interface SourceInfo {
  /** `git rev-parse HEAD`, or "unknown" outside a repository. */
  gitHead: string;
  /** SHA-1 over src/**\/*.ts (paths and contents, sorted): which code was measured, committed or not. */
  srcHash: string;
}

export function sourceInfo(root: string): SourceInfo {
  const git = spawnSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8" });
  const hash = createHash("sha1");
  const files = (fs.readdirSync(path.join(root, "src"), { recursive: true }) as string[]).filter((f) => f.endsWith(".ts")).sort();
  for (const file of files) hash.update(file).update("\0").update(fs.readFileSync(path.join(root, "src", file))).update("\0");
  return { gitHead: git.status === 0 ? git.stdout.trim() : "unknown", srcHash: hash.digest("hex").slice(0, 12) };
}
