/** compact's sweep of a killed run's leftovers around one session (io/sweep-leftovers.ts). */

import path from "node:path";
import { blobDirFor } from "../core/spill-layout.js";
import { sweepLeftovers } from "../io/sweep-leftovers.js";
import { readHeaderId } from "./preflight.js";

/**
 * Paths removed; run under the session lock, so no other chainpress is writing there. `headerOf`
 * is the file whose header names the session (the input of a `--out` copy not yet made).
 */
export function sweepSessionLeftovers(file: string, headerOf = file): string[] {
  const sessionId = readHeaderId(headerOf);
  const blobDir = sessionId === undefined ? undefined : blobDirFor(path.dirname(path.resolve(file)), sessionId);
  return sweepLeftovers(file, blobDir);
}
