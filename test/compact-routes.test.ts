/**
 * A small session compacted inline is read whole (main/small-session.ts), and each chain's task
 * reads the messages where they lie; a pool's run scans it and lightens it, and each chain goes to
 * its worker as lines of the file, or, when it is small, to the calling thread as those lines
 * (CompactOptions.inlineChainBytes). All must write the same bytes: the migrated
 * file, the appended entries (ids, parents, times and spill folders aside, which are random, the
 * clock's or each run's) and the spill files.
 */

import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createChainRunner, type ChainRunner } from "../src/main/chain-runner.js";
import { compactSession } from "../src/main/compact-session.js";
import type { ChainTask } from "../src/workers/chain-task.js";
import { sliceBytes } from "../src/workers/file-slice-columns.js";
import { SMALL_CHAIN_BYTES } from "../src/main/small-session.js";
import { copyReal } from "./helpers/cli-harness.js";
import { REPO_ROOT } from "./helpers/fixture-paths.js";
import { maskedLine } from "./helpers/masked-lines.js";
import { removeTempDirs, tempDir } from "./helpers/temp-dirs.js";

const runners: ChainRunner[] = [];
afterAll(async () => {
  await Promise.all(runners.map((runner) => runner.close()));
  removeTempDirs();
});

/**
 * A runner that notes how each chain task carried its span (lines of the file with this thread's
 * messages whole or lightened, or the messages) and, for lines, how many bytes they are.
 */
function notingRunner(workers: number, kinds: Set<string>, lineBytes: number[]): ChainRunner {
  const runner = createChainRunner(workers);
  runners.push(runner);
  const note = (input: ChainTask["input"]) => {
    kinds.add(input.kind === "file-slice" ? `lines, ${input.mainMessages}` : input.kind);
    if (input.kind === "file-slice") lineBytes.push(sliceBytes(input.slice));
  };
  return { ...runner, run: (task, onStart) => (note(task.input), runner.run(task, onStart)) };
}

/** The file as compacted, with what legitimately varies between two runs masked out of the appended lines. */
function masked(file: string, originalLines: number): { kept: string[]; appended: string[] } {
  const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n");
  return { kept: lines.slice(0, originalLines), appended: lines.slice(originalLines).map(maskedLine) };
}

function spillFiles(dir: string): Record<string, string> {
  const blobs = fs.readdirSync(dir).filter((name) => name.endsWith("-blobs"));
  return Object.fromEntries(blobs.flatMap((blob) => fs.readdirSync(path.join(dir, blob)).sort().map((name) => [name, fs.readFileSync(path.join(dir, blob, name), "utf8")])));
}

const SESSIONS = [
  // A version-1 file: both routes rewrite it as version 3 first.
  { name: "session.jsonl", copy: (dir: string) => copyReal("session.jsonl", dir) },
  // The bundled version-3 session, with spilled outputs.
  {
    name: "default-session.jsonl",
    copy: (dir: string) => {
      const file = path.join(dir, "default-session.jsonl");
      fs.copyFileSync(path.join(REPO_ROOT, "fixtures", "large-sessions", "default-session.jsonl"), file);
      return file;
    },
  },
];

describe("the whole-read route of a small session", () => {
  it.each(SESSIONS)("$name: inline (read whole), with a pool (scanned) and with a pool that leaves small chains to the calling thread write the same bytes", async ({ copy }) => {
    const runs = [];
    for (const { workers, inlineChainBytes } of [
      { workers: 0, inlineChainBytes: SMALL_CHAIN_BYTES },
      { workers: 1, inlineChainBytes: 0 },
      { workers: 1, inlineChainBytes: SMALL_CHAIN_BYTES },
    ]) {
      const dir = tempDir();
      const file = copy(dir);
      const kinds = new Set<string>();
      const pooledBytes: number[] = [];
      const report = await compactSession({ file, runner: notingRunner(workers, kinds, pooledBytes), options: { inlineChainBytes } });
      const migratedLines = fs.readFileSync(file, "utf8").trimEnd().split("\n").length - report.appendedEntries;
      runs.push({ kinds, pooledBytes, compressed: report.compressed.length, file: masked(file, migratedLines), spills: spillFiles(dir) });
    }
    const [inline, pooled, mixed] = runs;
    expect(inline!.kinds).toEqual(new Set(["messages"]));
    expect(pooled!.kinds).toEqual(new Set(["lines, lightened"]));
    // The pool gets the large chains only: the others ran on this thread.
    expect(mixed!.pooledBytes.length).toBeLessThan(pooled!.pooledBytes.length);
    expect(mixed!.pooledBytes.every((bytes) => bytes >= SMALL_CHAIN_BYTES)).toBe(true);
    expect(mixed!.pooledBytes).toEqual(pooled!.pooledBytes.filter((bytes) => bytes >= SMALL_CHAIN_BYTES));
    expect(inline!.compressed).toBeGreaterThan(0);
    for (const run of [pooled!, mixed!]) {
      expect(run.compressed).toBe(inline!.compressed);
      expect(run.file.kept.join("\n")).toBe(inline!.file.kept.join("\n"));
      expect(run.file.appended).toEqual(inline!.file.appended);
      expect(run.spills).toEqual(inline!.spills);
    }
  });
});
