// The scan's spool (io/spool.ts) is the file path's only copy of the outputs between the scan and
// the chain tasks: when it is damaged the chains fail closed, and a rerun heals them.

import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createChainRunner, type ChainRunner } from "../src/main/chain-runner.js";
import { scanSession } from "../src/main/scan-session.js";
import { runChainTask } from "../src/workers/run-chain-task.js";
import { compressFile } from "./helpers/compress-harness.js";
import { calls, readLines, SessionBuilder } from "./helpers/session-builder.js";

function session(): SessionBuilder {
  const s = new SessionBuilder();
  for (let c = 0; c < 4; c++) s.chain(`task ${c}`, [...calls(`c${c}`, 5, 300), { id: `big${c}`, name: "bash", output: `big ${c} `.repeat(12000) }]);
  return s;
}

const runners: ChainRunner[] = [];
afterAll(async () => {
  await Promise.all(runners.map((r) => r.close()));
});

describe("the spool path", () => {
  it.each([0, 2])("a spool truncated after the scan fails its chains closed, writes nothing for them, and a rerun heals them (%i workers)", async (workers) => {
    const runner = createChainRunner(workers);
    runners.push(runner);
    const file = session().writeTemp();
    const before = fs.readFileSync(file);
    const truncate = (dir: string) => {
      for (const name of fs.readdirSync(dir)) fs.truncateSync(path.join(dir, name), 10);
    };
    const broken = await compressFile(file, { runner, path: "spool", afterScan: truncate });
    expect(broken.result.compressedEntries).toEqual([]);
    expect(broken.result.skipped.filter((s) => s.reason === "no-summary")).toHaveLength(4);
    for (const skip of broken.result.skipped) expect(skip.cause ?? "").toMatch(/worker failed: .*file ended at byte/);
    // Nothing appended: the session is byte-identical (diagnostics aside, which say why).
    const appended = readLines(file).slice(before.toString("utf8").trim().split("\n").length);
    expect(appended.every((entry) => entry.customType !== "context-prune-index" && entry.customType !== "context-prune-chain")).toBe(true);

    const healed = await compressFile(file, { runner, path: "spool" });
    expect(healed.result.compressedEntries).toHaveLength(4);
  });

  it.each([0, 2])("a spool that cannot be written is reported as such, not as a missing session (%i workers)", async (workers) => {
    const runner = createChainRunner(workers);
    runners.push(runner);
    const file = session().writeTemp();
    const gone = path.join(path.dirname(file), "no-such-spool-folder");
    const scan = scanSession(file, runner, { spool: { dir: gone, spillThreshold: 65536, previewBytes: 2048 } });
    await expect(scan).rejects.toMatchObject({ code: "io", file });
    await expect(scan).rejects.toThrow(`cannot write the scan's spool file ${gone}`);
  });

  it("a task whose spooled outputs are not the planned ones is refused before anything is read or written", async () => {
    const task = {
      chainStart: 1,
      spoolSlice: { dir: "/nonexistent-spool", outputs: [] },
      protectedIds: [],
      plannedKeys: ["call_1@5"],
      reservedRefs: ["t1"],
      indexedRecords: [],
      toolRefs: ["t1"],
      spill: { blobDir: "/nonexistent-blobs", threshold: 100, previewBytes: 10, fileMode: 0o600, dirMode: 0o700 },
    };
    await expect(runChainTask(task)).rejects.toThrow("chain 1: spooled outputs differ from the plan");
  });
});
