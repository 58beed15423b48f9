/**
 * A small session compacted inline is read whole (main/small-session.ts), and each chain's task
 * reads the messages where they lie; a pool's run scans it and lightens it, and each chain goes to
 * its worker as lines of the file. Both must write the same bytes: the migrated
 * file, the appended entries (ids, parents, times and spill folders aside, which are random, the
 * clock's or each run's) and the spill files.
 */

import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createChainRunner, type ChainRunner } from "../src/main/chain-runner.js";
import { compactSession } from "../src/main/compact-session.js";
import type { ChainTask } from "../src/workers/chain-task.js";
import { copyReal } from "./helpers/cli-harness.js";
import { REPO_ROOT } from "./helpers/fixture-paths.js";
import { maskedLine } from "./helpers/masked-lines.js";
import { removeTempDirs, tempDir } from "./helpers/temp-dirs.js";

const runners: ChainRunner[] = [];
afterAll(async () => {
  await Promise.all(runners.map((runner) => runner.close()));
  removeTempDirs();
});

/** A runner that notes how each chain task carried its span: lines of the file with this thread's messages whole or lightened, or the messages. */
function notingRunner(workers: number, kinds: Set<string>): ChainRunner {
  const runner = createChainRunner(workers);
  runners.push(runner);
  const kindOf = (input: ChainTask["input"]) => (input.kind === "file-slice" ? `lines, ${input.mainMessages}` : input.kind);
  return { ...runner, run: (task, onStart) => (kinds.add(kindOf(task.input)), runner.run(task, onStart)) };
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
  it.each(SESSIONS)("$name: inline (read whole) and with a pool (scanned) write the same bytes", async ({ copy }) => {
    const runs = [];
    for (const workers of [0, 1]) {
      const dir = tempDir();
      const file = copy(dir);
      const kinds = new Set<string>();
      const report = await compactSession({ file, runner: notingRunner(workers, kinds) });
      const migratedLines = fs.readFileSync(file, "utf8").trimEnd().split("\n").length - report.appendedEntries;
      runs.push({ kinds, compressed: report.compressed.length, file: masked(file, migratedLines), spills: spillFiles(dir) });
    }
    const [inline, pooled] = runs;
    expect(inline!.kinds).toEqual(new Set(["messages"]));
    expect(pooled!.kinds).toEqual(new Set(["lines, lightened"]));
    expect(inline!.compressed).toBeGreaterThan(0);
    expect(inline!.compressed).toBe(pooled!.compressed);
    expect(inline!.file.kept.join("\n")).toBe(pooled!.file.kept.join("\n"));
    expect(inline!.file.appended).toEqual(pooled!.file.appended);
    expect(inline!.spills).toEqual(pooled!.spills);
  });
});
