/**
 * The install paths the README gives (issue 12 item 2), on the REAL pi CLI of every supported
 * build (bench/lib/pi-builds.ts): `pi install <checkout>` then a plain `pi`, and an unbuilt
 * checkout failing loudly. Once, with no pi involved: `npm pack` building dist/ through the
 * `prepare` script. Packing and building happen in a temporary copy, so the checkout's dist/
 * (which other test files run) is never rewritten under them.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "./helpers/fixture-paths.js";
import { removeTempDirs, tempDir } from "./helpers/temp-dirs.js";
import { piEnv, writeAgentDir } from "../bench/lib/pi-agent-dir.js";
import { ensureBuilt } from "./helpers/pi-build.js";
import { startMockLlm } from "./helpers/pi-mock-llm.mjs";
import { piBuild, PI_VERSIONS, type PiBuild } from "../bench/lib/pi-builds.js";
import { piCommand, startPiRpc } from "../bench/lib/pi-rpc.js";

afterAll(removeTempDirs);

/** A copy of what a fresh clone holds that the build needs, with the checkout's node_modules linked in. */
function cloneForBuild(withModules: boolean): string {
  const dir = tempDir("chainpress-clone-");
  for (const entry of ["package.json", "package-lock.json", "tsconfig.json", "extension.js", "scripts", "src", "bench"]) {
    fs.cpSync(path.join(REPO_ROOT, entry), path.join(dir, entry), { recursive: true });
  }
  if (withModules) fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  return dir;
}

function runPi(build: PiBuild, args: string[], cwd: string, env: NodeJS.ProcessEnv): { status: number | null; stderr: string; stdout: string } {
  const [bin, prefix] = piCommand(build);
  const result = spawnSync(bin, [...prefix, ...args], { cwd, env, encoding: "utf8", input: "", timeout: 60_000 });
  return { status: result.status, stderr: result.stderr, stdout: result.stdout };
}

describe.each(PI_VERSIONS)("installing chainpress into pi %s", (version) => {
  let build: PiBuild;
  beforeAll(() => {
    build = piBuild(version);
  });

  it("`pi install <checkout>` registers the package; a plain `pi` then has /pruner", async () => {
    ensureBuilt();
    const work = tempDir("chainpress-install-");
    const mock = await startMockLlm({ script: () => ({ text: "ok" }) });
    try {
      writeAgentDir(path.join(work, "agent"), mock.baseUrl);
      fs.mkdirSync(path.join(work, "proj"));
      const env = piEnv(path.join(work, "agent"), work);
      const installed = runPi(build, ["install", REPO_ROOT], path.join(work, "proj"), env);
      expect(installed.status, installed.stderr).toBe(0);
      const settings = JSON.parse(fs.readFileSync(path.join(work, "agent", "settings.json"), "utf8")) as { packages?: string[] };
      expect(settings.packages).toHaveLength(1);
      const pi = startPiRpc({ build, cwd: path.join(work, "proj"), env, args: [] });
      try {
        const commands = (await pi.send({ type: "get_commands" })).data as { commands: Array<{ name: string; source: string }> };
        expect(commands.commands).toContainEqual(expect.objectContaining({ name: "pruner", source: "extension" }));
        expect(await pi.command("/pruner status", /^pruner: on/)).toMatch(/^pruner: on/);
      } finally {
        await pi.close();
      }
    } finally {
      await mock.close();
    }
  }, 90_000);

  it("an unbuilt checkout fails loudly: pi names the missing build and exits 1", () => {
    const pkg = tempDir("chainpress-unbuilt-");
    fs.copyFileSync(path.join(REPO_ROOT, "package.json"), path.join(pkg, "package.json"));
    fs.copyFileSync(path.join(REPO_ROOT, "extension.js"), path.join(pkg, "extension.js"));
    const work = tempDir("chainpress-unbuilt-work-");
    writeAgentDir(path.join(work, "agent"), "http://127.0.0.1:9/v1");
    const result = runPi(build, ["-e", pkg, "--mode", "rpc"], work, piEnv(path.join(work, "agent"), work));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`chainpress is not built: ${path.join(pkg, "dist", "src", "extension", "index.js")} is missing`);
  }, 60_000);
});

describe("packaging", () => {
  it("`npm pack` runs `prepare`, which builds dist/, and the tarball holds what pi and the CLI run", () => {
    const clone = cloneForBuild(true);
    expect(fs.existsSync(path.join(clone, "dist"))).toBe(false);
    const packed = spawnSync("npm", ["pack", "--dry-run", "--json", "--silent"], { cwd: clone, encoding: "utf8", timeout: 240_000 });
    expect(packed.status, packed.stderr).toBe(0);
    const files = (JSON.parse(packed.stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
    for (const needed of ["extension.js", "package.json", "dist/src/extension/index.js", "dist/src/bin/compress-chain.worker.cjs", "dist/src/bin/main.cjs", "dist/src/index.d.ts"]) {
      expect(files, needed).toContain(needed);
    }
    expect(files.filter((f) => f.startsWith("test/") || f.startsWith("fixtures/") || f.startsWith("src/"))).toEqual([]);
  }, 300_000);

  it("`prepare` without the dev dependencies (npm install --omit=dev) fails, saying what to run", () => {
    const clone = cloneForBuild(false);
    const result = spawnSync(process.execPath, ["scripts/prepare.mjs"], { cwd: clone, encoding: "utf8" });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("TypeScript, a dev dependency, is not installed");
    expect(fs.existsSync(path.join(clone, "dist"))).toBe(false);
  });
});
