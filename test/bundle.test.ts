// The bundles `npm run build` makes (scripts/bundle.mjs): what the executable and the pool's
// threads load, and the layout that the paths worked out at run time rely on.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPool, workerFile } from "../src/main/worker-pool.js";
import { CLI, ensureBuilt, removeTempDirs, ROOT, tempDir } from "./helpers/cli-harness.js";

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

const BIN = path.join(ROOT, "dist", "src", "bin");

/** Every module specifier a built file imports, statically, with import() or with require(). */
function importsOf(file: string): string[] {
  const code = fs.readFileSync(file, "utf8");
  const found = [
    ...code.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*"([^"]+)"/gm),
    ...code.matchAll(/^\s*import\s*"([^"]+)"/gm),
    ...code.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g),
    ...code.matchAll(/\brequire\(\s*"([^"]+)"\s*\)/g),
  ];
  return found.map((match) => match[1]!);
}

const isRelative = (specifier: string) => specifier.startsWith(".") || specifier.startsWith("/");

describe("the bundles", () => {
  it("the pool starts its threads on the bundled worker, one file that imports only packages and node's modules", () => {
    expect(workerFile()).toBe(path.join(BIN, "compress-chain.worker.cjs"));
    const imports = importsOf(workerFile());
    expect(imports.filter(isRelative)).toEqual([]);
    // A copy of piscina inside the bundle would not be the pool's: the thread's `Piscina.isWorkerThread`
    // and its moved values' symbols would be a stranger's, and no task's result would arrive.
    expect(imports).toContain("piscina");
  });

  it("the executable's chunks lie beside it, at the depth of the modules they came from", () => {
    expect(CLI).toBe(path.join(BIN, "main.cjs"));
    const files = fs.readdirSync(BIN).filter((name) => name.endsWith(".cjs") && name !== "compress-chain.worker.cjs");
    expect(files).toContain("start-default.cjs");
    for (const name of files) {
      for (const specifier of importsOf(path.join(BIN, name)).filter(isRelative)) {
        expect(specifier, `${name} imports ${specifier}`).toMatch(/^\.\/[^/]+\.cjs$/);
        expect(fs.existsSync(path.join(BIN, specifier)), `${name} imports ${specifier}`).toBe(true);
      }
    }
  });

  it("package.json's bin and `npm start` run the bundles", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { bin: Record<string, string>; scripts: Record<string, string> };
    expect(path.resolve(ROOT, manifest.bin.chainpress!)).toBe(CLI);
    expect(manifest.scripts.start).toContain(path.relative(ROOT, path.join(BIN, "start-default.cjs")));
  });

  it("a pool whose worker bundle is missing is refused as it starts, naming the file and the build", () => {
    const missing = path.join(tempDir("chainpress-no-bundle-"), "dist", "src", "bin", "compress-chain.worker.js");
    expect(() => startPool(1, { workerFile: missing })).toThrow(`the worker threads' module ${missing} is missing: chainpress is not fully built (run "npm run build" in its folder)`);
  });

  it("pi's entry refuses a checkout built without the bundles (tsc alone), naming the worker bundle", async () => {
    const pkg = tempDir("chainpress-tsc-only-");
    fs.copyFileSync(path.join(ROOT, "extension.js"), path.join(pkg, "extension.js"));
    fs.mkdirSync(path.join(pkg, "dist", "src", "extension"), { recursive: true });
    fs.writeFileSync(path.join(pkg, "dist", "src", "extension", "index.js"), "export default () => undefined;\n");
    const entry = (await import(pathToFileURL(path.join(pkg, "extension.js")).href)) as { default: (pi: unknown) => Promise<unknown> };
    const bundle = path.join(pkg, path.relative(ROOT, workerFile()));
    await expect(entry.default({})).rejects.toThrow(`chainpress is not built: ${bundle} is missing`);
  });
});
