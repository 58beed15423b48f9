/** compact's sweep of a killed run's leftovers around one session (io/sweep-leftovers.ts). */

import path from "node:path";
import { blobDirFor } from "../core/spill-layout.js";
import { sweepLeftovers } from "../io/sweep-leftovers.js";
import { readHeaderId } from "./preflight.js";

/** Paths removed; run under the session lock, so no other chainpress is writing there. */
export function sweepSessionLeftovers(file: string): string[] {
  const sessionId = readHeaderId(file);
  const blobDir = sessionId === undefined ? undefined : blobDirFor(path.dirname(path.resolve(file)), sessionId);
  return sweepLeftovers(file, blobDir);
}
