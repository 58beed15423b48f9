// Integrity of spill files: `query` verifies a spilled body against what was recorded (length,
// xxh64 digest, UTF-8) and reports a damaged or missing file with a non-zero exit instead of
// printing wrong bytes. Spill files and the blob folder never get wider permissions than the
// session file, whatever the umask.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadHasher, spillDigestOf } from "../src/core/digest.js";
import { removeTempDirs, sha256, tempDir } from "./helpers/cli-harness.js";
import { addFigure } from "./helpers/stress-figures.js";
import { compact, CRASH_SESSION_ID, finalState, runCli, SPILL_THRESHOLD, stableCli, verifyArchivedBytes, writeCrashSession, releaseCliSnapshot } from "./helpers/stress-session.js";

beforeAll(() => void stableCli(), 300_000);
afterAll(() => {
  removeTempDirs();
  releaseCliSnapshot();
});

interface Compacted {
  dir: string;
  file: string;
  /** short ref → spill path, for spilled records. */
  spilled: Array<{ ref: string; spillPath: string }>;
  /** A record kept inline. */
  inlineRef: string;
}

function compacted(mode = 0o644): Compacted {
  const dir = tempDir("chainpress-integrity-");
  const file = writeCrashSession(dir, { chains: 4, mode });
  const run = compact(file);
  expect(run.status, run.stderr).toBe(0);
  const state = finalState(file);
  const spilled = [...state.refs].flatMap(([ref, key]) => (state.spillPaths.has(key) ? [{ ref, spillPath: state.spillPaths.get(key)! }] : []));
  const inlineRef = [...state.refs].find(([, key]) => !state.spillPaths.has(key))![0];
  expect(spilled.length).toBeGreaterThanOrEqual(4);
  return { dir, file, spilled, inlineRef };
}

const DAMAGE: Array<[string, (p: string) => void, RegExp]> = [
  [
    "one byte flipped (length kept)",
    (p) => {
      const bytes = fs.readFileSync(p);
      bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
      fs.writeFileSync(p, bytes);
    },
    /corrupt/,
  ],
  [
    "one ASCII letter changed (still valid UTF-8, length kept)",
    (p) => {
      const bytes = fs.readFileSync(p);
      const at = bytes.indexOf(0x61); // "a"
      bytes[at] = 0x62;
      fs.writeFileSync(p, bytes);
    },
    /corrupt/,
  ],
  ["truncated by one byte", (p) => fs.truncateSync(p, fs.statSync(p).size - 1), /corrupt/],
  ["truncated to nothing", (p) => fs.truncateSync(p, 0), /corrupt/],
  ["a byte appended", (p) => fs.appendFileSync(p, "x"), /corrupt/],
  ["deleted", (p) => fs.rmSync(p), /missing/],
  [
    "replaced by a folder",
    (p) => {
      fs.rmSync(p);
      fs.mkdirSync(p);
    },
    /unreadable|missing/,
  ],
  ["swapped with another spill file of the session", (p) => fs.copyFileSync(siblingOf(p), p), /corrupt/],
];

function siblingOf(p: string): string {
  const other = fs.readdirSync(path.dirname(p)).find((n) => path.join(path.dirname(p), n) !== p && !n.startsWith("."));
  return path.join(path.dirname(p), other!);
}

describe("query on a damaged spill file", () => {
  it.each(DAMAGE)("%s: reported with exit 1, and the wrong bytes are never printed", (_what, damage, reason) => {
    const { file, spilled, inlineRef } = compacted();
    const target = spilled[1]!;
    const original = fs.readFileSync(target.spillPath);
    damage(target.spillPath);
    addFigure("faultsInjected", 1, `spill file ${_what}`);
    const damaged = fs.existsSync(target.spillPath) && fs.statSync(target.spillPath).isFile() ? fs.readFileSync(target.spillPath) : Buffer.alloc(0);

    // --raw: nothing at all on stdout when any ref fails, even with a good ref next to it.
    const raw = runCli(["query", file, "--raw", inlineRef, target.ref]);
    expect(raw.status).toBe(1);
    expect(raw.stdout.length).toBe(0);
    expect(raw.stderr).toMatch(reason);
    expect(raw.stderr).toContain(target.ref);
    expect(raw.stderr).not.toMatch(/\n\s+at /);

    // The formatted output says it is unavailable and shows only the recorded preview.
    const text = runCli(["query", file, target.ref]);
    expect(text.status).toBe(1);
    expect(text.stderr).toMatch(reason);
    if (damaged.length > 2100) expect(text.stdout.includes(damaged.subarray(1000, 2100))).toBe(false);
    expect(text.stdout.includes(original)).toBe(false);

    // The other records are unaffected.
    const others = spilled.filter((s) => s !== target).map((s) => s.ref);
    const rest = runCli(["query", file, "--raw", ...others]);
    expect(rest.status, rest.stderr).toBe(0);
  });

  it("restoring the file's exact bytes makes it readable again, and a session full of them verifies", () => {
    const { file, spilled } = compacted();
    const target = spilled[0]!;
    const original = fs.readFileSync(target.spillPath);
    fs.writeFileSync(target.spillPath, Buffer.concat([original.subarray(0, 10), Buffer.from("X"), original.subarray(11)]));
    expect(runCli(["query", file, "--raw", target.ref]).status).toBe(1);
    fs.writeFileSync(target.spillPath, original);
    addFigure("recordsVerified", verifyArchivedBytes(file));
  });

  it("a spill file whose bytes are not UTF-8 but match length and digest as recorded is reported, not decoded to U+FFFD", async () => {
    // Build the damage so that length and digest checks pass: rewrite the index record to match
    // invalid bytes, as a buggy or foreign writer might have.
    const { file, spilled } = compacted();
    const target = spilled[0]!;
    const bad = Buffer.concat([fs.readFileSync(target.spillPath).subarray(0, 100), Buffer.from([0xff, 0xfe])]);
    fs.writeFileSync(target.spillPath, bad);
    const hasher = await loadHasher();
    const lines = fs.readFileSync(file, "utf8").split("\n");
    const patched = lines.map((line) => {
      if (!line.includes('"context-prune-index"') || !line.includes(JSON.stringify(target.spillPath).slice(1, -1))) return line;
      const entry = JSON.parse(line);
      for (const r of entry.data.toolCalls) {
        if (r.spillPath === target.spillPath) Object.assign(r, { spillBytes: bad.length, spillDigest: spillDigestOf(hasher, bad) });
      }
      return JSON.stringify(entry);
    });
    fs.writeFileSync(file, patched.join("\n"));
    const raw = runCli(["query", file, "--raw", target.ref]);
    expect(raw.status).toBe(1);
    expect(raw.stdout.length).toBe(0);
    expect(raw.stderr).toMatch(/not valid UTF-8/);
  });

  // A record written by pi-condense has no spillDigest; its `contentHash` (SHA-1 of the
  // normalised output, UPSTREAM-FORMAT §3.2) reveals a same-length alteration (read-spill.ts,
  // since 8cdaaa9; before, `query` printed the altered bytes as the output).
  it("an upstream record (no spillDigest) altered in place is reported, not printed", () => {
    const { file, spilled } = compacted();
    const target = spilled[0]!;
    const lines = fs.readFileSync(file, "utf8").split("\n").map((line) => {
      if (!line.includes('"context-prune-index"')) return line;
      const entry = JSON.parse(line);
      for (const r of entry.data.toolCalls) delete r.spillDigest;
      return JSON.stringify(entry);
    });
    fs.writeFileSync(file, lines.join("\n"));
    const bytes = fs.readFileSync(target.spillPath);
    bytes[bytes.indexOf(0x61)] = 0x62; // same length, valid UTF-8
    fs.writeFileSync(target.spillPath, bytes);
    const raw = runCli(["query", file, "--raw", target.ref]);
    expect(raw.stdout.equals(bytes), "the altered bytes were printed as the output").toBe(false);
    expect(raw.status).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------
// Permissions.

function modeOf(p: string): number {
  return fs.statSync(p).mode & 0o777;
}

/** Read/write bits of `mode` that the session's mode does not have (a folder's x counts as its r). */
function widerThan(mode: number, sessionMode: number, isDir: boolean): number {
  const rw = mode & 0o666 & ~sessionMode;
  const x = isDir ? mode & 0o111 & ~((sessionMode & 0o444) >> 2) : mode & 0o111;
  return rw | x;
}

function compactWithUmask(file: string, umask: string): void {
  fs.utimesSync(file, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  const args = [stableCli(), "compact", file, "--json", "--workers", "0", "--spill-threshold", String(SPILL_THRESHOLD)];
  const run = spawnSync("bash", ["-c", `umask ${umask} && exec "$@"`, "bash", process.execPath, ...args], { encoding: "utf8", env: { ...process.env, CHAINPRESS_CRASH_AT: "" } });
  expect(run.status, run.stderr).toBe(0);
}

describe("spill permissions never exceed the session file's", () => {
  it.each([
    ["0600", "022"],
    ["0640", "022"],
    ["0600", "000"],
    ["0640", "000"],
    ["0644", "077"],
  ])("session mode %s, umask %s", (octal, umask) => {
    const sessionMode = Number.parseInt(octal, 8);
    const dir = tempDir("chainpress-perm-");
    const file = writeCrashSession(dir, { chains: 4, mode: sessionMode });
    expect(modeOf(file)).toBe(sessionMode);
    compactWithUmask(file, umask);
    expect(modeOf(file), "the session keeps its mode").toBe(sessionMode);
    const blobDir = path.join(dir, `${CRASH_SESSION_ID}-blobs`);
    expect(widerThan(modeOf(blobDir), sessionMode, true), `blob folder ${modeOf(blobDir).toString(8)}`).toBe(0);
    const names = fs.readdirSync(blobDir);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const mode = modeOf(path.join(blobDir, name));
      expect(widerThan(mode, sessionMode, false), `${name} ${mode.toString(8)}`).toBe(0);
    }
  });
});

describe("spill permissions after repair and migration", () => {
  it("migration and --repair keep a 0600 session 0600 and its .bak no wider", () => {
    const dir = tempDir("chainpress-perm-");
    const file = writeCrashSession(dir, { chains: 2, version: 2, mode: 0o600 });
    fs.appendFileSync(file, '{"type":"message","id":"torn');
    const before = sha256(file);
    fs.utimesSync(file, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const args = [stableCli(), "compact", file, "--json", "--workers", "0", "--repair"];
    const run = spawnSync("bash", ["-c", 'umask 000 && exec "$@"', "bash", process.execPath, ...args], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(modeOf(file)).toBe(0o600);
    expect(modeOf(`${file}.bak`)).toBe(0o600);
    expect(sha256(`${file}.bak`)).toBe(before);
  });
});
