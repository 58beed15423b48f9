/**
 * Shared by the crash, fault, integrity and concurrency tests: a deterministic multi-chain
 * session with spilled outputs, the final state of a compacted session (what convergence is
 * judged on), an independent byte-exact check of every archived record through the built
 * `chainpress query --raw`, and pi's own parse of a session.
 */

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { expect } from "vitest";
import { ensureBuilt, originalOutputs, ROOT, settle, type CliResult } from "./cli-harness.js";
import { isAlive } from "../../src/io/session-lock.js";
import { addFigure } from "./stress-figures.js";
import { pngBytes } from "./image-bytes.js";
import { SessionBuilder, type CallSpec } from "./session-builder.js";

export const STRESS = process.env.CHAINPRESS_STRESS === "1";

let snapshotCli: string | undefined;

/**
 * The built CLI, copied once per test process to `.tmp/cli-snapshot-<pid>-<n>/`. Other test runs
 * on this machine rebuild dist/ whenever src/ changes; a long crash or stress suite running the
 * live dist/ would then load half-rebuilt modules. A snapshot is checked by importing every
 * module in it (a copy taken mid-rebuild fails to link) and retaken if needed.
 */
export function stableCli(): string {
  if (snapshotCli) return snapshotCli;
  sweepStaleSnapshots();
  ensureBuilt();
  let lastError = "";
  for (let attempt = 0; attempt < 10; attempt++) {
    const dir = path.join(ROOT, ".tmp", `cli-snapshot-${process.pid}-${attempt}`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.cpSync(path.join(ROOT, "dist", "src"), path.join(dir, "dist", "src"), { recursive: true });
    process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
    const check = [
      "import fs from 'node:fs'; import path from 'node:path'; import { pathToFileURL } from 'node:url';",
      "const root = process.argv[1];",
      "const files = fs.readdirSync(root, { recursive: true }).map(String).filter((f) => f.endsWith('.js') && !/(^|\\/)(main|start-default)\\.js$/.test(f));",
      "for (const f of files) await import(pathToFileURL(path.join(root, f)).href);",
    ].join("\n");
    const probe = spawnSync(process.execPath, ["--input-type=module", "-e", check, path.join(dir, "dist", "src")], { encoding: "utf8" });
    if (probe.status === 0) return (snapshotCli = path.join(dir, "dist", "src", "bin", "main.cjs"));
    lastError = probe.stderr;
    fs.rmSync(dir, { recursive: true, force: true });
    spawnSync("sleep", ["3"]);
    ensureBuilt();
  }
  throw new Error(`no consistent snapshot of dist/ could be taken: ${lastError}`);
}

/** Removes this process's snapshot (call from afterAll; vitest workers may end without "exit"). */
export function releaseCliSnapshot(): void {
  if (!snapshotCli) return;
  fs.rmSync(path.resolve(snapshotCli, "..", "..", "..", ".."), { recursive: true, force: true });
  snapshotCli = undefined;
}

/** Snapshots left by test processes that are gone (killed runs). */
function sweepStaleSnapshots(): void {
  const dir = path.join(ROOT, ".tmp");
  if (!fs.existsSync(dir)) return;
  for (const name of fs.readdirSync(dir)) {
    const pid = Number(/^cli-snapshot-(\d+)-\d+$/.exec(name)?.[1]);
    if (!pid || pid === process.pid || isAlive(pid)) continue;
    fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}

/** The snapshot CLI with arguments (see stableCli). */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): CliResult {
  const result = spawnSync(process.execPath, [stableCli(), ...args], {
    env: { ...process.env, NO_COLOR: "1", CHAINPRESS_DEBUG: "", CHAINPRESS_CRASH_AT: "", ...env },
    maxBuffer: 256 * 1024 * 1024,
  });
  return { status: result.status, stdout: result.stdout, out: result.stdout.toString("utf8"), stderr: result.stderr.toString("utf8") };
}
export const SPILL_THRESHOLD = 2000;
export const CRASH_SESSION_ID = "c7a5c7a5-0000-4000-8000-000000000007";

/** Outputs of `chars` UTF-16 units that mix ASCII, multi-byte UTF-8 and astral characters. */
export function mixedText(seed: string, chars: number): string {
  const alphabet = ["a", "b", "é", "ß", "中", "\u{1F600}", " ", "\n", "\t", "\\", '"', "/", "<", "{"];
  let text = `${seed}:`;
  let state = [...seed].reduce((h, c) => (h * 31 + c.codePointAt(0)!) >>> 0, 7);
  while (text.length < chars) {
    state = (state * 1103515245 + 12345) >>> 0;
    text += alphabet[state % alphabet.length]!;
  }
  return text;
}

export interface CrashSessionOptions {
  chains?: number;
  /** Header version; 2 makes compact migrate the file first. */
  version?: 2 | 3;
  sessionId?: string;
  /** Each chain also reads two screenshots (one with text, one image only), spilled as parts (issue 46). */
  images?: boolean;
}

/**
 * Closed chains of 2-3 calls each. Every chain has one spilled output (≥ SPILL_THRESHOLD chars)
 * and inline ones; some chains use parallel calls, a multi-part result, an error result, and a
 * tool-call id reused from an earlier chain (a second occurrence of the same id).
 */
export function crashSessionText(options: CrashSessionOptions = {}): string {
  const builder = new SessionBuilder(options.sessionId ?? CRASH_SESSION_ID);
  const chains = options.chains ?? 4;
  for (let c = 0; c < chains; c++) {
    const spilled: CallSpec = { id: `call_${c}_big`, name: "bash", args: { command: `cat big${c}` }, output: mixedText(`big${c}`, 2500 + 97 * c) };
    const small: CallSpec = { id: c % 2 === 1 ? "call_reused" : `call_${c}_small`, name: "read", args: { path: `src/f${c}.ts` }, output: mixedText(`small${c}`, 120 + c), isError: c % 4 === 3 };
    builder.user(`task ${c}`);
    if (c % 2 === 1) builder.turn([spilled, small]);
    else {
      builder.turn([spilled]);
      builder.turn([small]);
    }
    if (c % 3 === 0) {
      // A result with two text parts and an image part: the archive keeps the texts joined by "\n".
      const id = `call_${c}_multi`;
      builder.message({ role: "assistant", content: [{ type: "toolCall", id, name: "grep", arguments: { pattern: "x" } }], stopReason: "toolUse", timestamp: builder.tick() });
      builder.message({
        role: "toolResult",
        toolCallId: id,
        toolName: "grep",
        content: [{ type: "text", text: mixedText(`multiA${c}`, 60) }, { type: "image", data: "AAAA", mimeType: "image/png" }, { type: "text", text: mixedText(`multiB${c}`, 2100) }],
        isError: false,
        timestamp: builder.tick(),
      });
    }
    if (options.images) {
      for (const [k, content] of [[{ type: "text", text: `Read image file [image/png]` }], []].entries()) {
        const id = `call_${c}_shot${k}`;
        const image = { type: "image", data: pngBytes(32, 24, 2500 + 31 * c + k, 7 * c + k + 1).toString("base64"), mimeType: "image/png" };
        builder.message({ role: "assistant", content: [{ type: "toolCall", id, name: "read", arguments: { path: `shots/${c}-${k}.png` } }], stopReason: "toolUse", timestamp: builder.tick() });
        builder.message({ role: "toolResult", toolCallId: id, toolName: "read", content: [...content, image], isError: false, timestamp: builder.tick() });
      }
    }
    builder.reply(`done ${c}`);
  }
  if (options.version === 2) (builder.lines[0] as { version: number }).version = 2;
  return builder.toJsonl();
}

/** Writes the crash session to `dir/name` with the given mode, settled (older than the quiet window). */
export function writeCrashSession(dir: string, options: CrashSessionOptions & { name?: string; mode?: number } = {}): string {
  const file = path.join(dir, options.name ?? "session.jsonl");
  fs.writeFileSync(file, crashSessionText(options), { mode: options.mode ?? 0o644 });
  fs.chmodSync(file, options.mode ?? 0o644);
  settle(file);
  return file;
}

/** One line of a session; `undefined` for a line that does not parse (a torn tail). */
export function parsedLines(file: string): Array<Record<string, any> | undefined> {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, any>;
      } catch {
        return undefined;
      }
    });
}

export interface ChainSummary {
  startUserTimestamp: number;
  toolRefs: string[];
  rangeSummaryText: string | undefined;
  bodySource: string | undefined;
}

export interface FinalState {
  /** Chain entries, sorted by startUserTimestamp. */
  chains: ChainSummary[];
  /** Every occurrence key of every index record, in file order (duplicates kept). */
  indexedKeys: string[];
  /** shortId → occurrence key, from every backfilled index entry. */
  refs: Map<string, string>;
  /** Spilled records: occurrence key → spill path. */
  spillPaths: Map<string, string>;
}

/** What convergence is judged on; the blob folder's absolute path is replaced by `<blobs>`. */
export function finalState(file: string): FinalState {
  const blobDir = path.join(path.dirname(path.resolve(file)), `${sessionIdOf(file)}-blobs`);
  const lines = parsedLines(file).filter((l): l is Record<string, any> => l !== undefined && l.type === "custom");
  const chains: ChainSummary[] = lines
    .filter((l) => l.customType === "context-prune-chain")
    .map((l) => ({
      startUserTimestamp: l.data.startUserTimestamp,
      toolRefs: l.data.toolRefs,
      rangeSummaryText: typeof l.data.rangeSummaryText === "string" ? l.data.rangeSummaryText.split(blobDir).join("<blobs>") : undefined,
      bodySource: l.data.bodySource,
    }))
    .sort((a, b) => a.startUserTimestamp - b.startUserTimestamp);
  const indexedKeys: string[] = [];
  const refs = new Map<string, string>();
  const spillPaths = new Map<string, string>();
  for (const line of lines.filter((l) => l.customType === "context-prune-index")) {
    for (const record of line.data.toolCalls as Array<Record<string, any>>) {
      const key = `${record.toolCallId}@${record.resultTimestamp}`;
      indexedKeys.push(key);
      if (typeof record.spillPath === "string") spillPaths.set(key, record.spillPath);
    }
    for (const ref of (line.data.refs ?? []) as Array<Record<string, any>>) refs.set(ref.shortId, `${ref.toolCallId}@${ref.resultTimestamp}`);
  }
  return { chains, indexedKeys, refs, spillPaths };
}

export function sessionIdOf(file: string): string {
  const first = fs.readFileSync(file, "utf8").split("\n", 1)[0]!;
  return (JSON.parse(first) as { id: string }).id;
}

/** No occurrence key indexed twice, across every index entry of the file. */
export function expectNoDoubleIndex(state: FinalState): void {
  const seen = new Set<string>();
  const twice = state.indexedKeys.filter((key) => (seen.has(key) ? true : (seen.add(key), false)));
  expect(twice, "occurrence keys indexed twice").toEqual([]);
}

/**
 * Occurrence keys of the index records on pi's active branch (pi's own SessionManager walks it).
 * With another writer on the file, entries chainpress appended can end up on a side branch (the
 * other writer chains its lines to its own leaf); those do not count for what pi and chainpress
 * see, and a later run rightly archives their outputs again on the active branch.
 */
export function activeBranchIndexedKeys(file: string, scratchDir: string): string[] {
  fs.mkdirSync(scratchDir, { recursive: true });
  const copy = path.join(scratchDir, `branch-${path.basename(file)}`);
  fs.copyFileSync(file, copy);
  const keys: string[] = [];
  for (const entry of SessionManager.open(copy, scratchDir).getBranch() as Array<Record<string, any>>) {
    if (entry.type !== "custom" || entry.customType !== "context-prune-index") continue;
    for (const record of entry.data.toolCalls) keys.push(`${record.toolCallId}@${record.resultTimestamp}`);
  }
  fs.rmSync(copy, { force: true });
  return keys;
}

/** Chains compared on the fields convergence is about. */
export function expectSameChains(actual: FinalState, expected: FinalState): void {
  expect(actual.chains).toEqual(expected.chains);
  expect([...actual.indexedKeys].sort()).toEqual([...expected.indexedKeys].sort());
  expect(new Map([...actual.refs].sort())).toEqual(new Map([...expected.refs].sort()));
}

/**
 * `query --raw` of every archived record (by short ref, all in one call: outputs come back
 * NUL-separated) must equal the original tool outputs read straight from the session's
 * toolResult messages. Returns the number of records verified.
 */
export function verifyArchivedBytes(file: string, state: FinalState = finalState(file)): number {
  const originals = originalOutputs(file);
  const refs = [...state.refs.entries()].sort(([a], [b]) => Number(a.slice(1)) - Number(b.slice(1)));
  expect(refs.length, "records archived").toBeGreaterThan(0);
  for (const [, key] of refs) expect(originals.has(key), `original output of ${key}`).toBe(true);
  const expected = Buffer.from(refs.map(([, key]) => originals.get(key)!).join("\0"), "utf8");
  const run = runCli(["query", file, "--raw", ...refs.map(([shortId]) => shortId)]);
  if (run.status !== 0 || !run.stdout.equals(expected)) {
    // Count what is lost, one ref at a time, for the closing figures; then fail.
    const lost = refs.filter(([shortId, key]) => {
      const one = runCli(["query", file, "--raw", shortId]);
      return one.status !== 0 || !one.stdout.equals(Buffer.from(originals.get(key)!, "utf8"));
    });
    addFigure("recordsLost", lost.length);
    expect(lost.map(([shortId, key]) => `${shortId} ${key}`), `records not returned byte-exact (query stderr: ${run.stderr})`).toEqual([]);
  }
  expect(run.stderr.split("\n").filter((l) => l && !l.includes("warning:")), "query stderr").toEqual([]);
  expect(run.status).toBe(0);
  expect(run.stdout.equals(expected), "query --raw returns the original outputs byte-exact").toBe(true);
  return refs.length;
}

/**
 * pi's own loader on a copy (pi migrates v1/v2 files in place on load): it must open the file,
 * and its entries must be exactly the lines of the file that parse.
 */
export function expectPiOpens(file: string, scratchDir: string): void {
  fs.mkdirSync(scratchDir, { recursive: true });
  const copy = path.join(scratchDir, `pi-${path.basename(file)}`);
  fs.copyFileSync(file, copy);
  const pi = SessionManager.open(copy, scratchDir);
  const expectedIds = parsedLines(file)
    .filter((l): l is Record<string, any> => l !== undefined && l.type !== "session" && typeof l.id === "string")
    .map((l) => l.id as string);
  const header = parsedLines(file)[0];
  if (header?.version === 3) expect(pi.getEntries().map((e) => e.id)).toEqual(expectedIds);
  else expect(pi.getEntries().length).toBe(parsedLines(file).filter((l) => l !== undefined).length - 1);
  fs.rmSync(copy, { force: true });
}

/** `compact --json` through the built CLI (a fresh settle first: a crash leaves the file just modified). */
export function compact(file: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}): CliResult & { signal: NodeJS.Signals | null } {
  settle(file);
  const result = spawnSync(process.execPath, [stableCli(), "compact", file, "--json", "--workers", "0", "--spill-threshold", String(SPILL_THRESHOLD), ...extra], {
    env: { ...process.env, NO_COLOR: "1", CHAINPRESS_DEBUG: "", CHAINPRESS_CRASH_AT: "", ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: result.status, signal: result.signal, stdout: result.stdout, out: result.stdout.toString("utf8"), stderr: result.stderr.toString("utf8") };
}

/** Same as `compact`, without waiting (for the concurrency tests). */
export function compactAsync(file: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<{ status: number | null; signal: NodeJS.Signals | null; out: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [stableCli(), "compact", file, "--json", "--workers", "0", "--spill-threshold", String(SPILL_THRESHOLD), ...extra], {
      env: { ...process.env, NO_COLOR: "1", CHAINPRESS_DEBUG: "", CHAINPRESS_CRASH_AT: "", ...env },
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.on("error", reject);
    child.on("close", (status, signal) => resolve({ status, signal, out: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") }));
  });
}

/** Every file under `dir` (relative paths), sorted; for "nothing written elsewhere" checks. */
export function treeOf(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).map(String).sort();
}

