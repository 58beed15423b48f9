/**
 * Running the built chainpress CLI as a child process, on temp copies of sessions. The tests
 * exercise dist/ (what users run), so dist is rebuilt first when any source is newer; a lock
 * folder keeps parallel test files from running the build at the same time.
 */

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildDist } from "./build-dist.js";
import { REAL_SESSIONS_DIR } from "./fixture-paths.js";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The executable as bundled by `npm run build` (scripts/bundle.mjs), which package.json's `bin` names. */
export const CLI = path.join(ROOT, "dist", "src", "bin", "main.cjs");
export const REAL_SESSIONS = REAL_SESSIONS_DIR;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith(".ts")) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

function isBuilt(): boolean {
  return fs.existsSync(CLI) && fs.statSync(CLI).mtimeMs >= newestMtime(path.join(ROOT, "src"));
}

/** Builds dist/ when it is missing or older than src/. */
export function ensureBuilt(): void {
  // `npm test` has just built; rebuilding while other test files run the CLI could let them
  // import a half-written file.
  if (process.env.npm_lifecycle_event === "test" && fs.existsSync(CLI)) return;
  if (isBuilt()) return;
  const lock = path.join(ROOT, ".tmp", "cli-build.lock");
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      // Another test file builds: wait for it, then use its result.
      if (Date.now() > deadline || ageMs(lock) > 300_000) fs.rmSync(lock, { recursive: true, force: true });
      spawnSync("sleep", ["0.5"]);
      if (!fs.existsSync(lock) && fs.existsSync(CLI)) return;
    }
  }
  try {
    buildDist(ROOT);
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** An agent folder that does not exist: the CLI then runs on default settings. */
export const NO_AGENT_DIR = path.join(os.tmpdir(), "chainpress-tests-no-agent-dir");

export interface CliResult {
  status: number | null;
  stdout: Buffer;
  /** stdout as UTF-8. */
  out: string;
  stderr: string;
}

/** `timeoutMs`: the child is killed after that long (its status is then null). */
export function runCli(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): CliResult {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs, killSignal: "SIGKILL" as const }),
    cwd: options.cwd ?? ROOT,
    // No agent folder unless a test gives one: the user's own ~/.pi settings must not change results.
    env: { ...process.env, NO_COLOR: "1", CHAINPRESS_DEBUG: "", PI_CODING_AGENT_DIR: NO_AGENT_DIR, ...options.env },
    maxBuffer: 512 * 1024 * 1024,
  });
  return { status: result.status, stdout: result.stdout, out: result.stdout.toString("utf8"), stderr: result.stderr.toString("utf8") };
}

/** Runs `node <script>` (another built entry point). */
export function runNode(script: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): CliResult {
  const result = spawnSync(process.execPath, [script, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: "1", ...env }, maxBuffer: 256 * 1024 * 1024 });
  return { status: result.status, stdout: result.stdout, out: result.stdout.toString("utf8"), stderr: result.stderr.toString("utf8") };
}

export { removeTempDirs, tempDir } from "./temp-dirs.js";

/** Sets the modification time a minute back, past the CLI's "pi may be writing it" window. */
export function settle(file: string): void {
  const past = new Date(Date.now() - 60_000);
  fs.utimesSync(file, past, past);
}

/** A writable, settled copy of a real session in `dir`. */
export function copyReal(name: string, dir: string, as = name): string {
  const file = path.join(dir, as);
  fs.copyFileSync(path.join(REAL_SESSIONS, name), file);
  fs.chmodSync(file, 0o644);
  settle(file);
  return file;
}

export function sha256(file: string): string {
  return createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

/** Every line of a JSONL file parsed (throws on a line that does not parse). */
export function jsonLines(file: string): Array<Record<string, unknown>> {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Entries chainpress appended: pi-condense `custom` entries. */
export function pruneEntries(file: string): Array<{ customType: string; data: Record<string, unknown>; id: string; timestamp: string }> {
  return jsonLines(file).filter((e) => e.type === "custom" && String(e.customType).startsWith("context-prune-")) as never;
}

/** A session's tool results as its lines hold them, read independently of chainpress: occurrence key and content. Lines that do not parse (glued entries) are skipped, as pi skips them. */
export function* originalToolResults(file: string): Generator<{ key: string; content: unknown }> {
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    let entry: { type?: string; message?: { role?: string; toolCallId?: string; timestamp?: number; content?: unknown } };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const message = entry.message;
    if (entry.type === "message" && message?.role === "toolResult") yield { key: `${message.toolCallId}@${message.timestamp}`, content: message.content };
  }
}

/** Tool outputs of a session: occurrence key → the toolResult's text parts joined by "\n" (a string content as is). */
export function originalOutputs(file: string): Map<string, string> {
  const outputs = new Map<string, string>();
  for (const { key, content } of originalToolResults(file)) {
    const text = typeof content === "string" ? content : Array.isArray(content) ? content.filter((p) => p?.type === "text").map((p) => p.text as string).join("\n") : "";
    outputs.set(key, text);
  }
  return outputs;
}

export interface SmallSessionOptions {
  chains?: number;
  /** Characters of each tool output. */
  outputChars?: number;
  sessionId?: string;
}

/** A small version-3 session: `chains` closed chains of two tool calls each. Returns its lines. */
export function smallSessionLines(options: SmallSessionOptions = {}): string[] {
  const sessionId = options.sessionId ?? "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
  const lines: unknown[] = [{ type: "session", version: 3, id: sessionId, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp/proj" }];
  let clock = Date.UTC(2026, 0, 1);
  let parentId: string | null = null;
  let n = 0;
  const add = (message: Record<string, unknown>): void => {
    clock += 1000;
    const id = (++n).toString(16).padStart(8, "0");
    lines.push({ type: "message", id, parentId, timestamp: new Date(clock).toISOString(), message: { ...message, timestamp: clock } });
    parentId = id;
  };
  for (let c = 0; c < (options.chains ?? 3); c++) {
    add({ role: "user", content: [{ type: "text", text: `task ${c}` }] });
    for (let k = 0; k < 2; k++) {
      const id = `call_${c}_${k}`;
      add({ role: "assistant", content: [{ type: "toolCall", id, name: "bash", arguments: { command: `echo ${c} ${k}` } }], stopReason: "toolUse" });
      add({ role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text: `out ${c} ${k} `.padEnd(options.outputChars ?? 300, "x") }], isError: false });
    }
    add({ role: "assistant", content: [{ type: "text", text: `done ${c}` }], stopReason: "stop" });
  }
  return lines.map((line) => JSON.stringify(line));
}

/** Writes a small settled session to `dir/name`. */
export function writeSmallSession(dir: string, name = "small.jsonl", options: SmallSessionOptions = {}, transform?: (lines: string[]) => string): string {
  const file = path.join(dir, name);
  const lines = smallSessionLines(options);
  fs.writeFileSync(file, transform ? transform(lines) : `${lines.join("\n")}\n`);
  settle(file);
  return file;
}
