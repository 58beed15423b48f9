#!/usr/bin/env node
/**
 * npm's `prepare` step: builds dist/ on `npm ci` / `npm install` in a checkout, when npm installs
 * chainpress from git, and before `npm pack` / `npm publish`. dist/ is what pi and the CLI run,
 * so an install that cannot build must fail here, saying why, rather than leave a package
 * whose extension pi cannot load.
 */

import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

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
  const result = spawnSync(process.execPath, step, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
