// Concurrency: several `chainpress compact` processes on one session at once (one wins, the
// others are refused by the lock or find nothing to do), and chainpress while another process
// keeps appending pi-like lines (it refuses, or appends cleanly). Afterwards every line of the
// file parses: no interleaved or partial line, every line of the other writer intact.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTempDirs, settle, tempDir } from "./helpers/cli-harness.js";
import { addFigure } from "./helpers/stress-figures.js";
import {
  activeBranchIndexedKeys,
  compact,
  compactAsync,
  expectNoDoubleIndex,
  expectSameChains,
  finalState,
  parsedLines,
  stableCli,
  STRESS,
  verifyArchivedBytes,
  writeCrashSession,
  type FinalState,
  releaseCliSnapshot,
} from "./helpers/stress-session.js";

const CHAINS = 18;

beforeAll(() => void stableCli(), 300_000);
afterAll(() => {
  removeTempDirs();
  releaseCliSnapshot();
});

let base: FinalState | undefined;
function baseline(): FinalState {
  if (base) return base;
  const file = writeCrashSession(tempDir("chainpress-conc-base-"), { chains: CHAINS });
  expect(compact(file).status).toBe(0);
  base = finalState(file);
  return base;
}

/** Every line is one complete JSON value (no partial line, no two writers' bytes mixed). */
function expectAllLinesParse(file: string): void {
  const bad = parsedLines(file).flatMap((l, i) => (l === undefined ? [i + 1] : []));
  expect(bad, "lines that do not parse").toEqual([]);
  expect(fs.readFileSync(file).at(-1), "the file ends with a newline").toBe(0x0a);
}

const REFUSALS = /locked by another chainpress|modified .* ago; pi may still be writing|file changed since it was read/;

describe("two or more compact processes on the same session", () => {
  const rounds = STRESS ? 30 : 2;
  it.each([
    [2, true],
    [3, true],
    [2, false],
  ])(`%i processes at once (--force: %s), ${rounds} rounds: one wins, the others refuse or find nothing to do`, async (processes, force) => {
    const expected = baseline();
    let refused = 0;
    for (let round = 0; round < rounds; round++) {
      const dir = tempDir("chainpress-conc-");
      const file = writeCrashSession(dir, { chains: CHAINS });
      const runs = await Promise.all(Array.from({ length: processes }, () => compactAsync(file, force ? ["--force"] : [])));
      let compressedBy = 0;
      for (const run of runs) {
        expect(run.signal).toBeNull();
        expect(run.stderr).not.toMatch(/\n\s+at /);
        if (run.status === 0) {
          const appended = JSON.parse(run.out).sessions[0].report.appendedEntries as number;
          if (appended > 0) compressedBy++;
        } else {
          expect(run.status, run.stderr).toBe(1);
          expect(run.stderr).toMatch(REFUSALS);
          refused++;
        }
      }
      expect(compressedBy, "exactly one process compacted the session").toBe(1);
      expectAllLinesParse(file);
      const state = finalState(file);
      expectNoDoubleIndex(state);
      expectSameChains(state, expected);
      expect(fs.existsSync(`${file}.chainpress.lock`)).toBe(false);
      if (round === rounds - 1) addFigure("recordsVerified", verifyArchivedBytes(file, state));
    }
    addFigure("faultsInjected", rounds, `${processes} concurrent compacts`);
    // With several processes started together, the lock turned at least one away.
    if (processes > 2 || !force) expect(refused).toBeGreaterThan(0);
  }, 600_000);
});

// ---------------------------------------------------------------------------------------------
// Another writer. The child appends pi-like `message` entries, each chained to the previous one
// and written with one append (as pi's SessionManager does), every `interval` ms.

const WRITER = `
import fs from "node:fs";
const [file, count, interval, size, tag] = process.argv.slice(1);
const lines = fs.readFileSync(file, "utf8").trimEnd().split("\\n");
let parentId = JSON.parse(lines.at(-1)).id;
const sleep = new Int32Array(new SharedArrayBuffer(4));
for (let i = 0; i < Number(count); i++) {
  const id = tag + i.toString(16).padStart(4, "0");
  const role = i % 2 === 0 ? "user" : "assistant";
  const text = ("live " + tag + " " + i + " ").padEnd(Number(size), "é\\u2028x");
  const entry = { type: "message", id, parentId, timestamp: new Date().toISOString(), message: { role, content: [{ type: "text", text }], timestamp: Date.now() } };
  fs.appendFileSync(file, JSON.stringify(entry) + "\\n");
  parentId = id;
  if (i === 2) process.stdout.write("started\\n");
  Atomics.wait(sleep, 0, 0, Number(interval));
}
`;

function startWriter(file: string, count: number, interval: number, size: number, tag: string): { started: Promise<void>; done: Promise<number | null> } {
  const child = spawn(process.execPath, ["--input-type=module", "-e", WRITER, file, String(count), String(interval), String(size), tag], { stdio: ["ignore", "pipe", "inherit"] });
  const started = new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
  const done = new Promise<number | null>((resolve) => child.on("close", (status) => resolve(status)));
  return { started, done };
}

/** Tag for the writer's ids: 4 hex chars, so every id is 8 hex chars like pi's. */
const TAG = "e0e0";

describe("compact while another process appends to the session", () => {
  const cases: Array<[string, { force: boolean; size: number; interval: number; threshold?: number }]> = [
    ["without --force (the file was just modified)", { force: false, size: 300, interval: 2 }],
    ["with --force, small lines every 2 ms", { force: true, size: 300, interval: 2 }],
    ["with --force, small lines every 150 ms (chainpress gets some appends in between)", { force: true, size: 300, interval: 150 }],
    ["with --force, 20 kB lines every 5 ms against index lines of several kB (outputs kept inline)", { force: true, size: 20_000, interval: 5, threshold: 1_000_000 }],
  ];
  const rounds = STRESS ? 10 : 1;

  it.each(cases)("%s: chainpress refuses or appends cleanly; every line parses and the writer's lines are intact", async (_name, opts) => {
    const expected = baseline();
    const outcomes = { refused: 0, compacted: 0, partial: 0, sideBranchRecords: 0 };
    for (let round = 0; round < rounds; round++) {
      const dir = tempDir("chainpress-conc-writer-");
      const file = writeCrashSession(dir, { chains: CHAINS });
      // The writer runs for a second and a half or more, past chainpress's own run.
      const count = Math.max(12, Math.ceil(1500 / opts.interval));
      const writer = startWriter(file, count, opts.interval, opts.size, TAG);
      await writer.started;
      const extra = [...(opts.force ? ["--force"] : []), ...(opts.threshold ? ["--spill-threshold", String(opts.threshold)] : [])];
      const run = await compactAsync(file, extra);
      expect(await writer.done).toBe(0);
      addFigure("faultsInjected", 1, "concurrent writer");

      expect(run.signal).toBeNull();
      expect(run.stderr).not.toMatch(/\n\s+at /);
      if (run.status === 0) outcomes.compacted++;
      else {
        expect(run.status).toBe(1);
        // Refused up front, or some chains failed once the file changed under it.
        expect(run.stderr).toMatch(/modified .* ago|chain\(s\) could not be compressed|file changed since it was read/);
        if (/could not be compressed/.test(run.stderr)) {
          outcomes.partial++;
          const causes = JSON.parse(run.out).sessions[0].report.skipped.chains.map((c: { cause?: string }) => c.cause ?? "");
          for (const cause of causes.filter(Boolean)) expect(cause).toMatch(/file changed since it was read|not durable|refs changed/);
        } else outcomes.refused++;
      }
      if (!opts.force) expect(run.stderr).toMatch(/modified .* ago/);

      // No partial or mixed line; the writer's lines are all there, in order, intact.
      expectAllLinesParse(file);
      const lines = parsedLines(file) as Array<Record<string, any>>;
      const written = lines.filter((l) => typeof l.id === "string" && l.id.startsWith(TAG));
      expect(written.map((l) => l.id)).toEqual(Array.from({ length: count }, (_, i) => TAG + i.toString(16).padStart(4, "0")));
      for (const [i, l] of written.entries()) {
        expect(l.message.content[0].text).toBe(`live ${TAG} ${i} `.padEnd(opts.size, "é\u2028x"));
        if (i > 0) expect(l.parentId).toBe(written[i - 1]!.id);
      }
      if (!opts.force) expect(lines.some((l) => l.type === "custom")).toBe(false);

      // Once the writer is quiet, a normal run converges and nothing of the writer's is lost
      // from pi's active branch.
      settle(file);
      const final = compact(file, opts.threshold ? ["--spill-threshold", String(opts.threshold)] : []);
      expect(final.status, final.stderr).toBe(0);
      expectAllLinesParse(file);
      const state = finalState(file);
      // Entries written before the other writer's next line land on a side branch (the writer
      // chains to its own leaf); on pi's active branch no occurrence is indexed twice.
      const onBranch = activeBranchIndexedKeys(file, tempDir("chainpress-conc-pi-"));
      expectNoDoubleIndex({ ...state, indexedKeys: onBranch });
      expect([...onBranch].sort()).toEqual([...expected.indexedKeys].sort());
      if (state.indexedKeys.length > onBranch.length) outcomes.sideBranchRecords += state.indexedKeys.length - onBranch.length;
      expect(new Set(state.chains.map((c) => c.startUserTimestamp))).toEqual(new Set(expected.chains.map((c) => c.startUserTimestamp)));
      const branch = new Set(SessionManager.open(file, tempDir("chainpress-conc-pi-")).getBranch().map((e) => e.id));
      expect(written.filter((l) => !branch.has(l.id)).map((l) => l.id), "writer lines left off pi's active branch").toEqual([]);
      if (round === rounds - 1) addFigure("recordsVerified", verifyArchivedBytes(file, state));
    }
    console.log(`${_name}: ${JSON.stringify(outcomes)}`);
  }, 600_000);
});
