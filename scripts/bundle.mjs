#!/usr/bin/env node
/**
 * The second step of `npm run build`, after tsc: the two programs that start a thread, the
 * `chainpress` executable and the pool's worker, each bundled from tsc's output into a few
 * CommonJS files in dist/src/bin/. Every thread otherwise resolves, reads and compiles ~100 of our ES
 * modules one file at a time as it starts (ARCHITECTURE's decisions table). Packages stay outside the bundles,
 * loaded from node_modules as before; the library and pi extension entry points stay tsc's
 * modules.
 *
 * The chunks sit at the same depth as the modules they came from (dist/src/<folder>/), so a path
 * a module works out from its own location (worker-pool's worker, start-default's session) is
 * the same from a chunk.
 */

import fs from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist", "src");
const outDir = path.join(dist, "bin");

/** Packages and node's own modules are imported at run time, not copied in. */
const builtins = new Set(builtinModules);
const external = (id) => id.startsWith("node:") || builtins.has(id) || !(id.startsWith(".") || path.isAbsolute(id));

const common = { platform: "node", external, logLevel: "warn" };
// Each output below is CommonJS with "use strict": tsc's ES modules are strict, and stay so.

// Chunk names carry a hash of their content: an earlier build's would stay beside the new ones.
fs.rmSync(outDir, { recursive: true, force: true });

// The executable and `npm start`, as CommonJS: an ES module entry starts node's ES module loader,
// which then resolves and links every chunk and builds a facade for each of node's modules it
// imports, a fixed cost a small session's whole run notices (ARCHITECTURE's decisions table).
// Their lazily loaded parts (the compaction, the inline runner's worker modules) stay lazily
// loaded, as chunks of their own.
await build({
  ...common,
  input: { main: path.join(dist, "cli", "main.js"), "start-default": path.join(dist, "cli", "start-default.js") },
  output: { dir: outDir, format: "cjs", strict: true, entryFileNames: "[name].cjs", chunkFileNames: "[name]-[hash].cjs" },
});

// `npm start` runs start-default.cjs as npm's bin link runs main.cjs: through main's shebang, so
// the node flags are written once (src/cli/main.ts).
const shebang = fs.readFileSync(path.join(outDir, "main.cjs"), "utf8").split("\n", 1)[0];
if (!shebang.startsWith("#!")) throw new Error("dist/src/bin/main.cjs lost its shebang");
const startDefault = path.join(outDir, "start-default.cjs");
fs.writeFileSync(startDefault, `${shebang}\n${fs.readFileSync(startDefault, "utf8")}`);
for (const file of [path.join(outDir, "main.cjs"), startDefault]) fs.chmodSync(file, 0o755);

// The worker: one file, loaded whole by each of the pool's threads. As CommonJS, because piscina
// loads it with require(): an ES module there takes Node 20's require(esm) road, which loads the ES
// module loader into every thread.
await build({
  ...common,
  input: path.join(dist, "workers", "compress-chain.worker.js"),
  output: { file: path.join(outDir, "compress-chain.worker.cjs"), format: "cjs", strict: true, codeSplitting: false },
});
