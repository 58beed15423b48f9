/**
 * What a spilled output's record says about its text, computed wherever the text is at hand: in
 * the chain task (file and live paths) or already in the shard scan (io/spool.ts).
 */

import { contentHash } from "../core/content-hash.js";
import { spillDigestOf, type Hasher } from "../core/digest.js";
import { headPreview } from "../core/head-preview.js";

export interface SpillMaterial {
  /** The spill file's contents. */
  bytes: Buffer;
  resultPreview: string;
  contentHash: string;
  spillDigest: string;
}

export function spillMaterial(hasher: Hasher, toolName: string, text: string, previewBytes: number): SpillMaterial {
  const bytes = Buffer.from(text, "utf8");
  return {
    bytes,
    resultPreview: headPreview(text, previewBytes),
    contentHash: contentHash(toolName, text),
    spillDigest: spillDigestOf(hasher, bytes),
  };
}
