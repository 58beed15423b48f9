// Crash tests: the built `chainpress compact` is killed with SIGKILL at an exact write point
// (CHAINPRESS_CRASH_AT=<point>:<n>, src/io/crash-points.ts), never by timing luck. After each
// kill the session must still parse (by chainpress and by pi's SessionManager), keep every byte
// it had, and a rerun must converge to what an uninterrupted run produces: the same chain
// entries, no occurrence indexed twice, every archived output back byte-exact from `query --raw`.
//
// `npm test` runs one n per point; `npm run test:stress` (CHAINPRESS_STRESS=1) runs every n of
// every point, plus a second kill inside the `--repair` rerun.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSession } from "../src/io/read-session.js";
import { sanitizeForFileName } from "../src/core/spill-layout.js";
import { copyReal, jsonLines, originalOutputs, removeTempDirs, sha256, tempDir } from "./helpers/cli-harness.js";
import { expectPartsArchived, originalParts } from "./helpers/image-parts-sessions.js";
import { addFigure } from "./helpers/stress-figures.js";
import {
  compact,
  expectNoDoubleIndex,
  expectPiOpens,
  expectSameChains,
  finalState,
  sessionIdOf,
  stableCli,
  STRESS,
  verifyArchivedBytes,
  writeCrashSession,
  type FinalState,
  releaseCliSnapshot,
} from "./helpers/stress-session.js";

/** 18 chains: two commit groups (16 + 2), so group boundaries are crossed too. */
const CHAINS = 18;

type Point = "spill-written" | "spill-renamed" | "index-append-partial" | "index-appended" | "chain-appended" | "migrate-written" | "atomic-temp-written";

interface Baseline {
  /** The session as written, before any run. */
  original: Buffer;
  /** After an uninterrupted run. */
  state: FinalState;
  /** The uninterrupted run's file (for the migrated prefix of a version-2 session). */
  final: Buffer;
  /** How often each point is passed in an uninterrupted run. */
  hits: Record<Point, number>;
  /** Reader warning codes of the compacted file (none for the generated sessions). */
  warnings: string[];
  /** Non-text parts archived by an uninterrupted run. */
  parts: number;
}

/** A session to crash: how to make a fresh copy of it, and whether its file is rewritten first (migration). */
interface Scenario {
  name: string;
  make(dir: string): string;
  migrates: boolean;
  /** Chains a generated session holds (CHAINS unless said). */
  chains?: number;
}

const GENERATED_V3: Scenario = { name: "generated v3", make: (dir) => writeCrashSession(dir, { chains: CHAINS }), migrates: false };
const GENERATED_V2: Scenario = { name: "generated v2", make: (dir) => writeCrashSession(dir, { chains: CHAINS, version: 2 }), migrates: true };
/** Screenshot reads in every chain: two part spill files per chain beside its text spill (issue 46). */
const IMAGE_CHAINS = 3;
const GENERATED_IMAGES: Scenario = { name: "generated v3 with screenshots", make: (dir) => writeCrashSession(dir, { chains: IMAGE_CHAINS, images: true }), migrates: false, chains: IMAGE_CHAINS };
/** A real pi session (version 1: migrated first), copied from the shared fixtures. */
const REAL: Scenario = { name: "real large-session.jsonl", make: (dir) => copyReal("large-session.jsonl", dir, "session.jsonl"), migrates: true };

const baselines = new Map<string, Baseline>();

async function baseline(scenario: Scenario): Promise<Baseline> {
  const cached = baselines.get(scenario.name);
  if (cached) return cached;
  const file = scenario.make(tempDir("chainpress-crash-base-"));
  const original = fs.readFileSync(file);
  const run = compact(file);
  expect(run.status, run.stderr).toBe(0);
  const report = JSON.parse(run.out).sessions[0].report;
  const state = finalState(file);
  const indexLines = jsonLines(file).filter((l) => l.customType === "context-prune-index").length;
  const made: Baseline = {
    original,
    state,
    final: fs.readFileSync(file),
    warnings: (await readSession(file)).warnings.map((w) => w.code),
    parts: expectPartsArchived(file, blobDirOf(file)),
    hits: {
      "spill-written": report.spilledFiles,
      "spill-renamed": report.spilledFiles,
      "index-append-partial": indexLines,
      "index-appended": indexLines,
      "chain-appended": report.compressed.length,
      "migrate-written": scenario.migrates ? 1 : 0,
      "atomic-temp-written": scenario.migrates ? 1 : 0,
    },
  };
  if (scenario !== REAL) {
    expect(report.compressed).toHaveLength(scenario.chains ?? CHAINS);
    expect(report.spilledFiles).toBeGreaterThanOrEqual(scenario.chains ?? CHAINS);
  }
  baselines.set(scenario.name, made);
  return made;
}

const scenarioOf = (point: Point): Scenario => (point === "migrate-written" || point === "atomic-temp-written" ? GENERATED_V2 : GENERATED_V3);

/** One n per point for `npm test`, chosen to land in interesting places (mid-group, group boundary). */
const FAST: Array<[Point, number]> = [
  ["spill-written", 3],
  ["spill-renamed", 5],
  ["index-append-partial", 2],
  ["index-appended", 17],
  ["chain-appended", 16],
  ["migrate-written", 1],
  ["atomic-temp-written", 1],
];

const POINTS: Point[] = ["spill-written", "spill-renamed", "index-append-partial", "index-appended", "chain-appended", "migrate-written", "atomic-temp-written"];

beforeAll(() => void stableCli(), 300_000);
afterAll(() => {
  removeTempDirs();
  releaseCliSnapshot();
});

function blobDirOf(file: string): string {
  return path.join(path.dirname(file), `${sanitizeForFileName(sessionIdOf(file))}-blobs`);
}

/** Spill files present under their final name must be complete: equal to some original output, or to the JSON text of some original part. */
function expectNoTornSpill(file: string): void {
  const blobDir = blobDirOf(file);
  if (!fs.existsSync(blobDir)) return;
  const parts = [...originalParts(file).values()].flat().map(({ part }) => JSON.stringify(part));
  const originals = new Set([...originalOutputs(file).values(), ...parts].map((text) => Buffer.from(text, "utf8").toString("base64")));
  for (const name of fs.readdirSync(blobDir)) {
    if (name.startsWith(".tmp-")) continue; // an abandoned temp copy; never referenced
    expect(originals.has(fs.readFileSync(path.join(blobDir, name)).toString("base64")), `spill file ${name} is a complete output`).toBe(true);
  }
}

/** The session's own bytes survive: an appended-to v3 file keeps its prefix; a migrated one equals the clean migration. */
function expectOriginalKept(file: string, base: Baseline, migrates: boolean): void {
  expectOriginalIn(fs.readFileSync(file), base, migrates);
}

function expectOriginalIn(now: Buffer, base: Baseline, migrates: boolean): void {
  if (!migrates) {
    expect(now.subarray(0, base.original.length).equals(base.original), "the original session bytes are a prefix of the file").toBe(true);
  } else if (!now.equals(base.original)) {
    // Killed before the migration's rename the file is the untouched original; after it, the migration.
    const migratedLength = base.final.indexOf(Buffer.from('{"type":"custom","customType":"context-prune-'));
    expect(now.subarray(0, migratedLength).equals(base.final.subarray(0, migratedLength)), "the migrated session equals an uninterrupted migration").toBe(true);
  }
}

/** Kills compact at `point:n`, checks the wreck, reruns until done and checks convergence. */
async function crashAndRecover(point: Point, n: number, secondKill?: { point: Point; n: number }, scenario = scenarioOf(point)): Promise<void> {
  const base = await baseline(scenario);
  const dir = tempDir("chainpress-crash-");
  const file = scenario.make(dir);
  const migrates = scenario.migrates;

  const killed = compact(file, [], { CHAINPRESS_CRASH_AT: `${point}:${n}` });
  expect(killed.signal, `compact was not killed at ${point}:${n} (status ${killed.status}): ${killed.stderr}`).toBe("SIGKILL");
  addFigure("killRuns", 1, point);
  // SIGKILL runs no exit handler: the lock stays behind, with a dead pid (taken over below).
  expect(fs.existsSync(`${file}.chainpress.lock`)).toBe(true);

  // The wreck parses: chainpress reports a torn last line instead of failing; pi skips it.
  const loaded = await readSession(file);
  const torn = loaded.truncatedTail !== null;
  expect(torn).toBe(point === "index-append-partial");
  expect(loaded.warnings.filter((w) => w.code !== "truncated-last-line").map((w) => w.code)).toEqual(base.warnings);
  expectPiOpens(file, path.join(dir, "pi"));
  expectNoTornSpill(file);
  expectOriginalKept(file, base, migrates);

  if (torn) {
    // Without --repair the rerun refuses and leaves the file byte-identical.
    const before = sha256(file);
    const refused = compact(file);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/incomplete.*--repair/s);
    expect(sha256(file)).toBe(before);
    if (secondKill) {
      const again = compact(file, ["--repair"], { CHAINPRESS_CRASH_AT: `${secondKill.point}:${secondKill.n}` });
      expect(again.signal, `--repair rerun was not killed at ${secondKill.point}:${secondKill.n}`).toBe("SIGKILL");
      addFigure("killRuns", 1, `${secondKill.point} (inside --repair)`);
      expectPiOpens(file, path.join(dir, "pi"));
      expectNoTornSpill(file);
    }
    // A kill inside the repair may leave the .bak already made: --force replaces it.
    const repaired = compact(file, ["--repair", "--force"]);
    expect(repaired.status, repaired.stderr).toBe(0);
    const run = JSON.parse(repaired.out).sessions[0];
    // The .bak is the wreck itself, byte-exact, when the repair ran now (nothing to repair otherwise).
    if (run.backup) expectOriginalIn(fs.readFileSync(run.backup), base, migrates);
  } else {
    const rerun = compact(file);
    expect(rerun.status, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.out).sessions[0]).toMatchObject({ ok: true, failedChains: 0 });
  }

  expect(fs.existsSync(`${file}.chainpress.lock`), "the stale lock was taken over and released").toBe(false);
  // A kill before an atomic rename leaves its temp copy behind (never cleaned up); folder scans
  // must not mistake it for a session.
  for (const name of fs.readdirSync(dir)) expect(name === path.basename(file) || !name.endsWith(".jsonl"), name).toBe(true);
  jsonLines(file); // every line parses now
  expect((await readSession(file)).warnings.map((w) => w.code)).toEqual(base.warnings);
  expectPiOpens(file, path.join(dir, "pi"));
  expectOriginalKept(file, base, migrates);
  const state = finalState(file);
  expectNoDoubleIndex(state);
  expectSameChains(state, base.state);
  const verified = verifyArchivedBytes(file, state);
  addFigure("recordsVerified", verified);
  expect(verified).toBe(base.state.refs.size);
  // Every non-text part back too: inline as it was, spilled byte for byte its JSON text.
  expect(expectPartsArchived(file, blobDirOf(file))).toBe(base.parts);

  if (STRESS) {
    // Converged means converged: one more run appends nothing and changes no byte.
    const before = sha256(file);
    const idle = compact(file);
    expect(idle.status, idle.stderr).toBe(0);
    expect(JSON.parse(idle.out).sessions[0].report.appendedEntries).toBe(0);
    expect(sha256(file)).toBe(before);
  }
}

describe("SIGKILL at every write point (one n per point)", () => {
  it.each(FAST)("%s:%i → the session parses and a rerun converges", async (point, n) => {
    expect(n).toBeLessThanOrEqual((await baseline(scenarioOf(point))).hits[point]);
    await crashAndRecover(point, n);
  });

  it("a second kill inside the --repair rerun (after a torn index line) still converges", async () => {
    await crashAndRecover("index-append-partial", 1, { point: "index-appended", n: 1 });
  });

  it("a point passed n times does not fire at n + 1 (the counts above are exact)", async () => {
    const base = await baseline(GENERATED_V3);
    const file = writeCrashSession(tempDir("chainpress-crash-"), { chains: CHAINS });
    const run = compact(file, [], { CHAINPRESS_CRASH_AT: `index-append-partial:${base.hits["index-append-partial"] + 1}` });
    expect(run.signal).toBeNull();
    expect(run.status, run.stderr).toBe(0);
    expectSameChains(finalState(file), base.state);
  });
});

describe("SIGKILL at every write point of a part spill file (issue 46)", () => {
  // Each chain's batch: its text spill, then its two screenshots' part spills; every n of both
  // spill points, and an index line torn and appended around the parts' records.
  it("the session holds part spills: two per chain, each point passed once per spill file", async () => {
    const base = await baseline(GENERATED_IMAGES);
    const indexLines = base.final.toString("utf8").split("\n").filter((line) => line.includes('"customType":"context-prune-index"'));
    const spilledParts = indexLines.flatMap((line) => JSON.parse(line).data.toolCalls).flatMap((record) => record.parts ?? []).filter((part) => part.kind === "spilled");
    expect(spilledParts).toHaveLength(2 * IMAGE_CHAINS);
    // Part spills are among the files each spill point passes.
    expect(base.hits["spill-written"]).toBeGreaterThanOrEqual(3 * IMAGE_CHAINS);
  });

  it.each(["spill-written", "spill-renamed"] as Point[])("%s: every n → the session parses and a rerun converges with every part back", async (point) => {
    const hits = (await baseline(GENERATED_IMAGES)).hits[point];
    for (let n = 1; n <= hits; n++) await crashAndRecover(point, n, undefined, GENERATED_IMAGES);
  }, 600_000);

  it.each([["index-append-partial", 2], ["index-appended", 2], ["chain-appended", 2]] as Array<[Point, number]>)("%s:%i → converges with every part back", async (point, n) => {
    await crashAndRecover(point, n, undefined, GENERATED_IMAGES);
  }, 120_000);
});

// Registered only under `npm run test:stress`, so `npm test` reports no skipped tests.
if (STRESS) describe("SIGKILL at every n of every write point (stress)", () => {
  // Cases are generated lazily from the baseline counts, one test per point (all its n in turn).
  it.each(POINTS)("%s: every n", async (point) => {
    const hits = (await baseline(scenarioOf(point))).hits[point];
    expect(hits).toBeGreaterThan(0);
    for (let n = 1; n <= hits; n++) await crashAndRecover(point, n);
  }, 1_800_000);

  it.each(POINTS)("%s on a real pi session (version 1, migrated first): first, middle and last n", async (point) => {
    const hits = (await baseline(REAL)).hits[point];
    expect(hits).toBeGreaterThan(0);
    for (const n of [...new Set([1, Math.ceil(hits / 2), hits])]) await crashAndRecover(point, n, undefined, REAL);
  }, 1_800_000);

  it.each(["spill-written", "spill-renamed", "index-append-partial", "index-appended", "chain-appended", "atomic-temp-written"] as Point[])(
    "a torn index line, then a second kill at %s inside the --repair rerun",
    async (second) => {
      for (const n of second === "atomic-temp-written" ? [1] : [1, 2]) await crashAndRecover("index-append-partial", 16, { point: second, n });
    },
    600_000,
  );
});
