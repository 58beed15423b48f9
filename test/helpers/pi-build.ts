/**
 * The real pi loads the compiled extension (and piscina the compiled worker) from dist/. `npm test`
 * builds first; a direct `vitest run` after editing sources would otherwise test stale code, so
 * rebuild when any source under src/ is newer than its compiled file.
 */

import fs from "node:fs";
import path from "node:path";
import { buildDist } from "./build-dist.js";

/**
 * What the e2e tests pass to `pi -e`: the checkout folder, exactly as the README tells users, so
 * pi finds the extension through package.json's `pi.extensions` (extension.js → dist/).
 */
export const EXTENSION_ENTRY = path.resolve(".");

function sourcesNewerThanDist(dir: string): boolean {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const source = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (sourcesNewerThanDist(source)) return true;
    } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) {
      const compiled = path.join("dist", source.replace(/\.ts$/, ".js"));
      if (!fs.existsSync(compiled) || fs.statSync(compiled).mtimeMs < fs.statSync(source).mtimeMs) return true;
    }
  }
  return false;
}

export function ensureBuilt(): void {
  if (!sourcesNewerThanDist("src")) return;
  buildDist(path.resolve("."));
}
