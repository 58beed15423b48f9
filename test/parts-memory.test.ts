// Issue 46: a session of 200 screenshot reads (~100 KB of base64 each) compacts within the memory
// budget (peak RSS at most half the file plus 250 MB, as the built CLI reports it), every
// screenshot archived as a part spill file of its own.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pixelTokens } from "../src/core/image-tokens.js";
import { ensureBuilt, removeTempDirs, runCli, settle, tempDir } from "./helpers/cli-harness.js";
import { indexRecords, partsChain, READ_IMAGE_TEXT, screenshot } from "./helpers/image-parts-sessions.js";
import { SessionBuilder } from "./helpers/session-builder.js";

beforeAll(ensureBuilt, 180_000);
afterAll(removeTempDirs);

const READS = 200;
const PER_CHAIN = 10;

describe("memory", () => {
  it("200 screenshot reads of ~100 KB compact within 0.5 × file + 250 MB peak RSS, each screenshot a part spill file", () => {
    const s = new SessionBuilder();
    for (let c = 0; c < READS / PER_CHAIN; c++) {
      const reads = Array.from({ length: PER_CHAIN }, (_, i) => ({ id: `shot_${c}_${i}`, content: [{ type: "text", text: READ_IMAGE_TEXT }, screenshot(c * PER_CHAIN + i + 1)] }));
      partsChain(s, `screens ${c}`, reads);
    }
    const dir = tempDir();
    const file = path.join(dir, "screens.jsonl");
    fs.writeFileSync(file, s.toJsonl());
    settle(file);
    const size = fs.statSync(file).size;
    expect(size).toBeGreaterThan(READS * 100_000);

    const run = runCli(["compact", file, "--json"]);
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.out).sessions[0].report;
    expect(report.compressed).toHaveLength(READS / PER_CHAIN);
    expect(report.spilledFiles).toBe(READS);
    const spilled = indexRecords(file).flatMap((record) => record.parts ?? []).filter((part: { kind: string }) => part.kind === "spilled");
    expect(spilled).toHaveLength(READS);
    expect(fs.readdirSync(path.join(dir, `${s.sessionId}-blobs`)).filter((name) => name.endsWith(".json"))).toHaveLength(READS);
    console.log(`200 screenshot reads: file ${(size / 1e6).toFixed(1)} MB, peak RSS ${(report.peakRssBytes / 1e6).toFixed(0)} MB of a ${((0.5 * size + 250e6) / 1e6).toFixed(0)} MB budget`);
    expect(report.peakRssBytes).toBeLessThan(0.5 * size + 250e6);

    // `stats` counts the screenshots as billed (640 × 400 pixels each), not as their ~20 MB of base64.
    const stats = runCli(["stats", "--json", file]);
    expect(stats.status, stats.stderr).toBe(0);
    const { before, after } = JSON.parse(stats.out).context;
    expect(before.images).toEqual({ count: READS, tokens: READS * pixelTokens(640, 400), byRule: { pixels: READS, "pi-estimate": 0 } });
    expect(before.tokens).toBeLessThan(READS * 1_000);
    expect(after.images.count).toBe(0);
  }, 300_000);
});
