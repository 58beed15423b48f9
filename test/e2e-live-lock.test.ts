/**
 * Issue 11 item 5, on the REAL pi CLI of every supported build (bench/lib/pi-builds.ts; rpc
 * mode, offline, chainpress loaded from dist/): while pi has a session open, the extension's
 * live-session lock makes the CLI keep its hands off it: `compact` refuses the file unless
 * --force, skips it with a note inside a folder, and `stats` and `--dry-run` say "open in pi
 * (pid N)". Once pi is gone (closed, or killed so the lock stays behind) the lock is stale and
 * the CLI goes ahead.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, settle } from "./helpers/cli-harness.js";
import { piEnv, writeAgentDir } from "../bench/lib/pi-agent-dir.js";
import { EXTENSION_ENTRY, ensureBuilt } from "./helpers/pi-build.js";
import { startMockLlm } from "./helpers/pi-mock-llm.mjs";
import { piBuild, PI_VERSIONS, type PiBuild } from "../bench/lib/pi-builds.js";
import { startPiRpc, type PiRpc } from "../bench/lib/pi-rpc.js";

let work: string;
let mock: Awaited<ReturnType<typeof startMockLlm>>;
let pi: PiRpc | undefined;

beforeAll(async () => {
  ensureBuilt();
  work = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-live-"));
  mock = await startMockLlm({ script: () => ({ text: "ok" }) });
  writeAgentDir(path.join(work, "agent"), mock.baseUrl);
}, 180_000);

afterAll(async () => {
  await pi?.close(5_000);
  await mock?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

/** Each build in a project folder of its own, so its sessions folder holds its sessions only. */
function start(build: PiBuild, extra: string[] = []): PiRpc {
  const cwd = path.join(work, `proj-${build.version}`);
  fs.mkdirSync(cwd, { recursive: true });
  return startPiRpc({ build, cwd, env: piEnv(path.join(work, "agent"), work), args: ["-e", EXTENSION_ENTRY, ...extra] });
}

function lockOwner(sessionFile: string): { pid: number } {
  return JSON.parse(fs.readFileSync(`${sessionFile}.chainpress.live`, "utf8")) as { pid: number };
}

describe.each(PI_VERSIONS)("the live-session lock on a real pi %s", (version) => {
  it("the CLI refuses, skips or notes a session open in pi, and goes ahead once pi is gone", async () => {
    const build = piBuild(version);
    pi = start(build);
    await pi.prompt("hello");
    const sessionFile = ((await pi.send({ type: "get_state" })).data as { sessionFile: string }).sessionFile;
    const { pid } = lockOwner(sessionFile);
    expect(pid).not.toBe(process.pid);
    settle(sessionFile); // the quiet-file rule is not what is tested here
    const before = fs.readFileSync(sessionFile);

    const named = runCli(["compact", sessionFile, "--workers", "0"]);
    expect(named.status).toBe(1);
    expect(named.stderr).toContain(`open in pi (pid ${pid})`);
    expect(fs.readFileSync(sessionFile)).toEqual(before);

    const folder = runCli(["compact", path.dirname(sessionFile), "--workers", "0"]);
    expect(folder.status, folder.stderr).toBe(0);
    expect(folder.out).toContain(`skipped: open in pi (pid ${pid}); left alone`);
    expect(fs.readFileSync(sessionFile)).toEqual(before);

    const stats = runCli(["stats", sessionFile]);
    expect(stats.status, stats.stderr).toBe(0);
    expect(stats.out).toContain(`open in pi (pid ${pid})`);
    const dry = runCli(["compact", sessionFile, "--dry-run", "--workers", "0"]);
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.out).toContain(`open in pi (pid ${pid})`);

    const forced = runCli(["compact", sessionFile, "--force", "--workers", "0"]);
    expect(forced.status, forced.stderr).toBe(0);

    // A normal exit removes the lock.
    expect(await pi.close()).toBe(0);
    pi = undefined;
    expect(fs.existsSync(`${sessionFile}.chainpress.live`)).toBe(false);

    // A killed pi leaves its lock behind, stale as soon as the process is gone.
    pi = start(build, ["--session", sessionFile]);
    await pi.prompt("again");
    const second = lockOwner(sessionFile).pid;
    process.kill(second, "SIGKILL");
    await pi.close(5_000);
    pi = undefined;
    expect(fs.existsSync(`${sessionFile}.chainpress.live`)).toBe(true);
    settle(sessionFile);
    const after = runCli(["stats", sessionFile]);
    expect(after.out).not.toContain("open in pi");
    const compact = runCli(["compact", sessionFile, "--workers", "0"]);
    expect(compact.status, compact.stderr).toBe(0);
  }, 120_000);
});
