/**
 * The entry pi loads (package.json `pi.extensions`): `pi -e <this folder>`, `pi install <this
 * folder>`, or the installed package. It is plain JavaScript that exists before any build, so
 * a checkout that was never built fails loudly (pi reports the error and exits) instead of pi
 * starting without the extension, which is what a manifest entry pointing at a missing dist/
 * file leads to.
 */

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = dirname(fileURLToPath(import.meta.url));
const built = join(root, "dist", "src", "extension", "index.js");
/** What the extension's worker threads load: the build's second step (scripts/bundle.mjs) makes it. */
const workerBundle = join(root, "dist", "src", "bin", "compress-chain.worker.cjs");

export default async function chainpress(pi) {
  for (const file of [built, workerBundle]) {
    if (!existsSync(file)) throw new Error(`chainpress is not built: ${file} is missing; run "npm install" (or "npm run build") in ${root}`);
  }
  const extension = await import(pathToFileURL(built).href);
  return extension.default(pi);
}
