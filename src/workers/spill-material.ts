/**
 * What a spilled output's record says about its text, computed in the chain task from the text as
 * a string (the live path) or straight from its UTF-8 bytes (the file path: the output was never
 * decoded, core/literal-refs.ts). Both give the same bytes and fields for the same text.
 */

import type { Hash } from "node:crypto";
import { textHash, textHashOfUtf8 } from "../core/content-hash.js";
import { spillDigestOf, type Hasher } from "../core/digest.js";
import { headPreview, headPreviewOfUtf8 } from "../core/head-preview.js";

export interface SpillMaterial {
  /** The spill file's contents. */
  bytes: Buffer;
  resultPreview: string;
  /** The content hash of the text, not yet digested (core/content-hash.ts: parts may continue it). */
  textHash: Hash;
  spillDigest: string;
}

export function spillMaterial(hasher: Hasher, toolName: string, text: string, previewBytes: number): SpillMaterial {
  const bytes = Buffer.from(text, "utf8");
  return {
    bytes,
    resultPreview: headPreview(text, previewBytes),
    textHash: textHash(toolName, text),
    spillDigest: spillDigestOf(hasher, bytes),
  };
}

/**
 * The same from the text's UTF-8 bytes (well-formed text only: it came from a spill-eligible
 * output); `lfAfterBlank` as contentHashOfUtf8 takes it.
 */
export function spillMaterialOfUtf8(hasher: Hasher, toolName: string, bytes: Buffer, previewBytes: number, lfAfterBlank?: readonly number[]): SpillMaterial {
  return {
    bytes,
    resultPreview: headPreviewOfUtf8(bytes, previewBytes),
    textHash: textHashOfUtf8(toolName, bytes, lfAfterBlank),
    spillDigest: spillDigestOf(hasher, bytes),
  };
}
