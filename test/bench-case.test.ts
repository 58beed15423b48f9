// One end-to-end benchmark case on the bundled default session, in a fresh child process (dist/
// must be built, as `npm test` does): the fixture is left untouched, every chain is compressed,
// and the measurements the tables are built from are present and plausible.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { measureIoFloor } from "../bench/lib/io-floor.js";
import { runCase } from "../bench/lib/run-case.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DEFAULT_SESSION = path.join(ROOT, "fixtures", "large-sessions", "default-session.jsonl");
const sha1 = (file: string) => crypto.createHash("sha1").update(fs.readFileSync(file)).digest("hex");

describe("bench case", () => {
  it.each([0, 1])("compacts a copy of the default session with workers=%i and reports every measure", async (workers) => {
    const before = sha1(DEFAULT_SESSION);
    const result = await runCase({ fixture: DEFAULT_SESSION, workers, measureLoad: true });
    expect(sha1(DEFAULT_SESSION)).toBe(before);
    expect(result.compressed).toBe(8);
    expect(result.skipped).toBe(0);
    expect(result.spilledFiles).toBe(5);
    expect(result.appendedBytes).toBeGreaterThan(0);
    expect(Object.keys(result.stageMs)).toEqual(expect.arrayContaining(["plan", "encode", "append", "decode", "extract", "hash", "spill", "body"]));
    expect(result.wallMs).toBeGreaterThan(0);
    expect(result.floor.totalMs).toBeGreaterThan(0);
    expect(result.eventLoop.maxMs).toBeGreaterThanOrEqual(result.eventLoop.p99Ms);
    expect(result.peakRssMb).toBeGreaterThan(10);
    expect(result.load?.loadMs).toBeGreaterThan(0);
  });

  it("the I/O floor writes the same bytes and files it is given", async () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-floor-"));
    try {
      const floor = await measureIoFloor({ sessionFile: DEFAULT_SESSION, scratchDir: scratch, appendedBytes: 1000, appendedEntries: 3, spillSizes: [70_000, 5] });
      expect(fs.statSync(path.join(scratch, "floor-append.jsonl")).size).toBe(1000);
      const spills = fs.readdirSync(path.join(scratch, "floor-blobs")).map((f) => fs.statSync(path.join(scratch, "floor-blobs", f)).size);
      expect(spills.sort((a, b) => a - b)).toEqual([5, 70_000]);
      expect(floor.totalMs).toBeCloseTo(floor.readMs + floor.appendMs + floor.spillMs);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});
