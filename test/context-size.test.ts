// The context measure (main/context-size.ts) on the file path's lightened model, whose lengths
// come from the scan and from placeholders, equals JSON.stringify of the real render, message by
// message, on real sessions before and after a compaction (after one, the render replaces most of
// the context with messages it made, and the measure tells those from the branch's own).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChainRunner } from "../src/main/chain-runner.js";
import { measureContext, renderContext } from "../src/main/context-size.js";
import { scanSession } from "../src/main/scan-session.js";
import { loadSessionModel, modelOf } from "../src/main/session-model.js";
import { copyReal, ensureBuilt, removeTempDirs, runCli, tempDir } from "./helpers/cli-harness.js";

beforeAll(ensureBuilt, 180_000);
afterAll(removeTempDirs);

/** What the model would be sent, serialised for real. */
async function renderedChars(file: string): Promise<number> {
  return renderContext(await loadSessionModel(file)).reduce((chars, message) => chars + JSON.stringify(message).length, 0);
}

async function lightenedMeasure(file: string): Promise<number> {
  const runner = createChainRunner(0);
  try {
    return measureContext(modelOf(await scanSession(file, runner))).chars;
  } finally {
    await runner.close();
  }
}

describe("measureContext", () => {
  for (const name of ["large-session.jsonl", "compact.jsonl", "session.jsonl", "before-compaction.jsonl"]) {
    it(`${name}: the lightened model measures what the real render serialises to, before and after compaction`, async () => {
      const file = copyReal(name, tempDir());
      for (const stage of ["before", "after"]) {
        if (stage === "after") {
          const run = runCli(["compact", file, "--workers", "0", "--json"]);
          expect(run.status, run.stderr).toBe(0);
        }
        const expected = await renderedChars(file);
        expect(await lightenedMeasure(file), `${stage} compaction`).toBe(expected);
        expect(measureContext(await loadSessionModel(file)).chars, `${stage} compaction, real model`).toBe(expected);
      }
    }, 120_000);
  }

  it("large-session.jsonl: compaction leaves a smaller context (the after stage above measures a changed render)", async () => {
    const file = copyReal("large-session.jsonl", tempDir());
    const before = await renderedChars(file);
    expect(runCli(["compact", file, "--workers", "0"]).status).toBe(0);
    expect(await renderedChars(file)).toBeLessThan(before / 2);
  }, 120_000);
});
