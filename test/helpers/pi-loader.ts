/**
 * What a pi build's OWN loader makes of a session file: `SessionManager.open(file)
 * .buildSessionContext()` of that build, run in a child process on the build's Node (pi 1.6.0
 * needs Node 22, see bench/lib/pi-builds.ts; pi 0.73.1 runs on this process's Node the same
 * way). The oracle for "chainpress reads a session as pi does".
 *
 * Each message comes back as its role, the tool-call id of a tool result, the ids of an
 * assistant's tool calls (an empty list when it made none), and its text: the text parts of its
 * content joined with nothing between them (thinking, tool calls and images left out; a
 * compaction or branch summary's `summary`). The file itself is never written: pi migrates an
 * old file in place when it opens it, so the child opens a copy.
 */

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { piBuild, type PiBuild } from "../../bench/lib/pi-builds.js";

export interface PiContextMessage {
  role: string;
  /** A toolResult's `toolCallId`. */
  toolCallId?: string;
  /** An assistant's tool calls, in content order (empty when it made none). */
  toolCallIds?: string[];
  text: string;
}

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), "pi-loader-child.mjs");

/** The module a plain `import "<package>"` loads (package.json `exports["."]`). */
function packageEntry(build: PiBuild): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(build.packageDir, "package.json"), "utf8")) as { exports?: Record<string, string | { import?: string; default?: string }>; main?: string };
  const dot = pkg.exports?.["."];
  const entry = typeof dot === "string" ? dot : (dot?.import ?? dot?.default ?? pkg.main);
  if (!entry) throw new Error(`${build.packageName}@${build.version} names no entry module`);
  return path.join(build.packageDir, entry);
}

/** pi's context for `file`, as `build` (a PiBuild or its version, e.g. "1.6.0") loads it. */
export async function piContext(build: PiBuild | string, file: string): Promise<PiContextMessage[]> {
  return (await piContexts(build, [file]))[0]!;
}

/** The same for several files, in one child process (pi's modules load once). */
export async function piContexts(build: PiBuild | string, files: string[]): Promise<PiContextMessage[][]> {
  return loaderRun(build, files, false);
}

/**
 * Opens the files themselves with `build`'s loader, so pi migrates an old file in place, as it
 * would on a user's machine (it drops lines it cannot parse). Returns their contexts.
 */
export async function migrateWithPi(build: PiBuild | string, files: string[]): Promise<PiContextMessage[][]> {
  return loaderRun(build, files, true);
}

async function loaderRun(build: PiBuild | string, files: string[], inPlace: boolean): Promise<PiContextMessage[][]> {
  const resolved = typeof build === "string" ? piBuild(build) : build;
  const absolute = files.map((file) => path.resolve(file));
  for (const file of absolute) if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) throw new Error(`no session file ${file}`);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-pi-loader-"));
  try {
    // A home and agent folder of its own: nothing of the user's pi configuration is read or written.
    const env = { PATH: process.env.PATH, HOME: scratch, PI_CODING_AGENT_DIR: path.join(scratch, "agent"), PI_OFFLINE: "1" };
    const { code, stdout, stderr } = await run(resolved.node, [CHILD, packageEntry(resolved), scratch, ...(inPlace ? ["--in-place"] : []), ...absolute], env);
    if (code !== 0) throw new Error(`${resolved.label}'s loader failed (exit ${code}) on ${absolute.join(", ")}:\n${stderr}`);
    return JSON.parse(stdout) as PiContextMessage[][];
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function run(bin: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr }));
  });
}
