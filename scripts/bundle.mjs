#!/usr/bin/env node
/**
 * The second step of `npm run build`, after tsc: the two programs that start a thread, the
 * `chainpress` executable and the pool's worker, each bundled from tsc's output into a few
 * files in dist/src/bin/. Every thread otherwise resolves, reads and compiles ~100 of our ES
 * modules one file at a time as it starts: bundled, a run takes ~140 ms less CPU and ends ~100 ms
 * sooner on 2 cores (bench/RESULTS.md, nineteenth pass). Packages stay outside the bundles,
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

// Chunk names carry a hash of their content: an earlier build's would stay beside the new ones.
fs.rmSync(outDir, { recursive: true, force: true });

// The executable and `npm start`: their lazily loaded parts (the compaction, the inline runner's
// worker modules) stay lazily loaded, as chunks of their own.
await build({
  ...common,
  input: { main: path.join(dist, "cli", "main.js"), "start-default": path.join(dist, "cli", "start-default.js") },
  output: { dir: outDir, format: "esm", entryFileNames: "[name].js", chunkFileNames: "[name]-[hash].js" },
});

// The worker: one file, loaded whole by each of the pool's threads. As CommonJS, because piscina
// loads it with require(): an ES module there took Node 20's require(esm) road, which loads the ES
// module loader into every thread (two threads ready for their first task in a median of 132 ms
// against 112, and ~35 ms less CPU, as CommonJS: bench/RESULTS.md, twenty-fourth pass).
await build({
  ...common,
  input: path.join(dist, "workers", "compress-chain.worker.js"),
  output: { file: path.join(outDir, "compress-chain.worker.cjs"), format: "cjs", codeSplitting: false },
});
