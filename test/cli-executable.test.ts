// The `chainpress` executable as npm's bin link runs it: through its shebang, with the node flags
// written there (src/cli/main.ts), which the bench also reads (bench/lib/cli-node-flags.ts).

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliNodeFlags } from "../bench/lib/cli-node-flags.js";
import { piBuilds } from "../bench/lib/pi-builds.js";
import { hasInterruptBudget, raiseTierUpBudget } from "../src/cli/tier-up-budget.js";
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

  it("starts on every supported node (20 and 22) as `env` finds it first on PATH, and compacts", () => {
    const nodes = [...new Set(piBuilds().map((build) => build.node))];
    expect(nodes.length).toBeGreaterThanOrEqual(2);
    for (const node of nodes) {
      const bin = tempDir("chainpress-node-");
      fs.symlinkSync(node, path.join(bin, "node"));
      const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}` };
      const file = writeSmallSession(tempDir("chainpress-exec-"));
      // The executable itself, as npm's bin link runs it: the kernel reads the shebang.
      const result = spawnSync(CLI, ["compact", file, "--json", "--force"], { encoding: "utf8", env });
      expect(result.stderr, node).toBe("");
      expect(result.status, node).toBe(0);
      expect(JSON.parse(result.stdout).ok, node).toBe(true);
    }
  });

  it("raises the tier-up budget only on a V8 that has the flag", () => {
    expect(hasInterruptBudget("11.3.244.8-node.33")).toBe(true);
    expect(hasInterruptBudget("10.2.154.26-node.36")).toBe(true);
    expect(hasInterruptBudget("12.4.254.21-node.33")).toBe(false);
    expect(hasInterruptBudget("11.8.172.17-node.19")).toBe(false);
    expect(raiseTierUpBudget("12.4.254.21-node.33")).toBe(false);
  });

  it("the bench runs it with those same flags", () => {
    const words = shebang();
    expect(cliNodeFlags(CLI)).toEqual(words.slice(words.indexOf("node") + 1));
    for (const flag of cliNodeFlags(CLI)) expect(flag).toMatch(/^--/);
  });

  it("`npm start` runs the default job through that same shebang", () => {
    const scripts = (JSON.parse(fs.readFileSync("package.json", "utf8")) as { scripts: Record<string, string> }).scripts;
    const start = path.join(path.dirname(CLI), "start-default.cjs");
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
