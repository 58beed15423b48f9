/**
 * The `chainpress` executable a checkout built. Since the executable became CommonJS it is
 * dist/src/bin/main.cjs; a checkout built before that (bench:ab's `--against` an older commit)
 * has dist/src/bin/main.js.
 */

import fs from "node:fs";
import path from "node:path";

export function builtCli(checkout: string): string {
  const bin = path.join(checkout, "dist", "src", "bin");
  const current = path.join(bin, "main.cjs");
  return fs.existsSync(current) ? current : path.join(bin, "main.js");
}
