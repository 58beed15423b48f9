/**
 * Builds dist/ the way `npm run build` does (tsc, then the bundles of scripts/bundle.mjs), for
 * test files that run the built code and may be started without `npm test` building first.
 */

import { spawnSync } from "node:child_process";

/** Runs `npm run build` in `root`; throws with its output when it fails. */
export function buildDist(root: string): void {
  const result = spawnSync("npm", ["run", "build", "--silent"], { cwd: root, encoding: "utf8", stdio: "pipe" });
  if (result.status !== 0) throw new Error(`npm run build failed (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`);
}
