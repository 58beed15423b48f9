// The `chainpress` executable as npm's bin link runs it: through its shebang, with the node flags
// written there (src/cli/main.ts), which the bench also reads (bench/lib/cli-node-flags.ts).

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliNodeFlags } from "../bench/lib/cli-node-flags.js";
import { REPO_ROOT } from "./helpers/fixture-paths.js";
import { CLI, ensureBuilt, jsonLines, removeTempDirs, tempDir, writeSmallSession } from "./helpers/cli-harness.js";

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

/** The shebang's command, split as `env -S` splits it. */
function shebang(): string[] {
  return fs.readFileSync(CLI, "utf8").split("\n", 1)[0]!.replace(/^#!/, "").trim().split(/\s+/);
}

describe("the chainpress executable", () => {
  it("runs through its shebang, and node accepts the flags written there", () => {
    const [command, ...args] = shebang();
    const result = spawnSync(command!, [...args, CLI, "--help"], { encoding: "utf8" });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("compact");
  });

  it("the bench runs it with those same flags", () => {
    const words = shebang();
    expect(cliNodeFlags(CLI)).toEqual(words.slice(words.indexOf("node") + 1));
    for (const flag of cliNodeFlags(CLI)) expect(flag).toMatch(/^--/);
  });

  it("`npm start` runs the default job through that same shebang", () => {
    const scripts = (JSON.parse(fs.readFileSync("package.json", "utf8")) as { scripts: Record<string, string> }).scripts;
    const start = path.join(path.dirname(CLI), "start-default.js");
    expect(scripts.start!.split("&&").map((part) => part.trim()).at(-1)).toBe(path.relative(REPO_ROOT, start));
    expect(fs.readFileSync(start, "utf8").split("\n", 1)[0]).toBe(fs.readFileSync(CLI, "utf8").split("\n", 1)[0]);
    expect(fs.statSync(start).mode & 0o111).toBe(0o111);
  });

  it("compacts a session when run through its shebang", () => {
    const [command, ...args] = shebang();
    const dir = tempDir("chainpress-exec-");
    const file = writeSmallSession(dir);
    const before = jsonLines(file).length;
    const result = spawnSync(command!, [...args, CLI, "compact", file, "--json", "--force"], { encoding: "utf8" });
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout).ok).toBe(true);
    const appended = jsonLines(file).slice(before);
    expect(appended.map((entry) => entry.customType)).toContain("context-prune-chain");
  });
});
