// The bundles `npm run build` makes (scripts/bundle.mjs): what the executable and the pool's
// threads load, and the layout that the paths worked out at run time rely on.

import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { workerFile } from "../src/main/pool-runner.js";
import { CLI, ensureBuilt, ROOT } from "./helpers/cli-harness.js";

beforeAll(() => ensureBuilt());

const BIN = path.join(ROOT, "dist", "src", "bin");

/** Every module specifier a built file imports, statically or with import(). */
function importsOf(file: string): string[] {
  const code = fs.readFileSync(file, "utf8");
  const found = [...code.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*"([^"]+)"/gm), ...code.matchAll(/^\s*import\s*"([^"]+)"/gm), ...code.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)];
  return found.map((match) => match[1]!);
}

const isRelative = (specifier: string) => specifier.startsWith(".") || specifier.startsWith("/");

describe("the bundles", () => {
  it("the pool starts its threads on the bundled worker, one file that imports only packages and node's modules", () => {
    expect(workerFile()).toBe(path.join(BIN, "compress-chain.worker.js"));
    const imports = importsOf(workerFile());
    expect(imports.filter(isRelative)).toEqual([]);
    // A copy of piscina inside the bundle would not be the pool's: the thread's `Piscina.isWorkerThread`
    // and its moved values' symbols would be a stranger's, and no task's result would arrive.
    expect(imports).toContain("piscina");
  });

  it("the executable's chunks lie beside it, at the depth of the modules they came from", () => {
    expect(CLI).toBe(path.join(BIN, "main.js"));
    const files = fs.readdirSync(BIN).filter((name) => name.endsWith(".js"));
    expect(files).toContain("start-default.js");
    for (const name of files) {
      for (const specifier of importsOf(path.join(BIN, name)).filter(isRelative)) {
        expect(specifier, `${name} imports ${specifier}`).toMatch(/^\.\/[^/]+\.js$/);
        expect(fs.existsSync(path.join(BIN, specifier)), `${name} imports ${specifier}`).toBe(true);
      }
    }
  });

  it("package.json's bin and `npm start` run the bundles", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { bin: Record<string, string>; scripts: Record<string, string> };
    expect(path.resolve(ROOT, manifest.bin.chainpress!)).toBe(CLI);
    expect(manifest.scripts.start).toContain(path.relative(ROOT, path.join(BIN, "start-default.js")));
  });
});
