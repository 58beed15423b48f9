/**
 * Where the upstream compressor (pi-condense 2.9.1, bundled for Node) lives, when it does. It is
 * shared material beside the checkout, never part of the project: users and `npm test` do not
 * have it, so every caller must cope with `undefined` (the benchmark prints a skipped row).
 */

import fs from "node:fs";
import path from "node:path";

/** Overrides the default location (a flag overrides this in turn). */
export const PEER_ENV = "CHAINPRESS_PEER";

const PEER_RELATIVE = ["..", "shared", "peers", "pi-condense-2.9.1", "pi-condense-compact.mjs"];

export interface PeerLocation {
  /** The peer script, when it exists. */
  file: string | undefined;
  /** Where it was looked for (for the "skipped" line). */
  lookedAt: string;
  /** How the location was chosen: needed to reproduce the run. */
  source: "flag" | "env" | "default";
}

export function locatePeer(repoRoot: string, flag?: string): PeerLocation {
  const env = process.env[PEER_ENV];
  const source = flag ? "flag" : env ? "env" : "default";
  const lookedAt = path.resolve(flag ?? env ?? path.join(repoRoot, ...PEER_RELATIVE));
  return { file: fs.existsSync(lookedAt) ? lookedAt : undefined, lookedAt, source };
}
