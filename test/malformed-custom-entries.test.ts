// Issue 11 item 3: one malformed `context-prune-chain` entry must cost only itself. The built CLI
// runs on a real compacted session whose chain entry was then damaged by hand; render, stats and
// compact go on, warn naming the line, and the other chains still render.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, jsonLines, removeTempDirs, runCli, settle, tempDir, writeSmallSession } from "./helpers/cli-harness.js";

beforeAll(ensureBuilt, 180_000);
afterAll(removeTempDirs);

/** A compacted 4-chain session whose b1 entry had `field` replaced by `value`; returns the file and the damaged line. */
function damagedSession(field: string, value: unknown): { file: string; line: number } {
  const file = writeSmallSession(tempDir(), "s.jsonl", { chains: 4 });
  const run = runCli(["compact", file, "--workers", "0"]);
  expect(run.status, run.stderr).toBe(0);
  const lines = fs.readFileSync(file, "utf8").split("\n");
  const index = lines.findIndex((text) => text.includes('"customType":"context-prune-chain"') && text.includes('"blockId":"b1"'));
  expect(index).toBeGreaterThan(0);
  const entry = JSON.parse(lines[index]!) as { data: Record<string, unknown> };
  if (value === undefined) delete entry.data[field];
  else entry.data[field] = value;
  lines[index] = JSON.stringify(entry);
  fs.writeFileSync(file, lines.join("\n"));
  settle(file);
  return { file, line: index + 1 };
}

const DAMAGE: Array<[string, unknown]> = [
  ["droppedToolCallIds", 7],
  ["protectedToolCallIds", "call_0_0"],
  ["toolRefs", { t1: true }],
  ["droppedOccurrenceKeys", [1, 2]],
  ["rangeSummaryText", 42],
  ["compressedAt", undefined],
  ["blockId", `b${"9".repeat(40)}`],
];

describe("a malformed context-prune-chain entry", () => {
  it.each(DAMAGE)("%s = %j: render, stats and compact warn naming the line and keep the other chains", (field, value) => {
    const { file, line } = damagedSession(field, value);

    const render = runCli(["render", file, "--text"]);
    expect(render.status, render.stderr).toBe(0);
    expect(render.stderr).toContain(`line ${line} (entry `);
    expect(render.stderr).toContain(field);
    expect(render.out).toContain('<compressed-chain id="b2"');
    expect(render.out).not.toContain('<compressed-chain id="b1"');

    const stats = runCli(["stats", file, "--json"]);
    expect(stats.status, stats.stderr).toBe(0);
    expect(stats.stderr).toContain(`line ${line} (entry `);
    expect((JSON.parse(stats.out) as { chains: { compressed: number } }).chains.compressed).toBe(3);

    const compact = runCli(["compact", file, "--workers", "0", "--rolling-window", "0"]);
    expect(compact.status, compact.stderr + compact.out).toBe(0);
    expect(compact.out).toContain(`line ${line} (entry `);
    // The chain the bad entry named is compressed again under a fresh id; no other chain is touched.
    const chains = jsonLines(file).filter((e) => e.customType === "context-prune-chain").map((e) => (e.data as { blockId: string }).blockId);
    expect(chains.slice(1)).toEqual(["b2", "b3", "b4", "b5"]);
  });
});
