/**
 * An output's non-text content parts as its record keeps them (core/archived-parts.ts): each part
 * resolved (on the file path a long `data` string is a ref into its line) and written as its JSON
 * text, kept inline under the spill threshold, else as a spill file of its own that joins the
 * chain's writes (staged, synced, linked and verified like a text spill, before the index entry).
 * The same bytes whichever route the content came by.
 */

import type { ArchivedPart, SpilledPart } from "../core/archived-parts.js";
import { nonTextParts, partData, partMimeType, partType } from "../core/archived-parts.js";
import type { HashedPart } from "../core/content-hash.js";
import { spillDigestOf, type Hasher } from "../core/digest.js";
import { jsonText } from "../core/json-text.js";
import { resolvedValue, type LiteralRef } from "../core/literal-refs.js";
import { partSpillFileName } from "../core/spill-layout.js";
import { shouldSpill } from "../core/spill-rule.js";
import { spillPathFor, type SpillWrite } from "../io/write-spill.js";
import type { SpillSettings } from "./chain-task.js";

export interface ArchivedOutputParts {
  parts: ArchivedPart[];
  /** What the content hash covers of each part, in the same order. */
  hashed: HashedPart[];
  /** Bytes of the part spill files added to `writes`. */
  spilledBytes: number;
}

/** The parts of `content` (none: undefined); spilled ones are appended to `writes`. */
export function archiveParts(content: unknown, occurrenceKey: string, literals: readonly LiteralRef[], spill: SpillSettings, hasher: Hasher, writes: SpillWrite[]): ArchivedOutputParts | undefined {
  const found = nonTextParts(content);
  if (found.length === 0) return undefined;
  const out: ArchivedOutputParts = { parts: [], hashed: [], spilledBytes: 0 };
  for (const { at, part: raw } of found) {
    const part = resolvedValue(raw, literals);
    const json = jsonText(part) ?? "null";
    if (!shouldSpill(json, spill.threshold)) {
      out.parts.push({ at, kind: "inline", part });
      out.hashed.push({ at, json });
      continue;
    }
    const bytes = Buffer.from(json, "utf8");
    const fileName = partSpillFileName(hasher, occurrenceKey, at);
    writes.push({ fileName, bytes });
    out.spilledBytes += bytes.length;
    out.parts.push(spilledPart(at, part, bytes, spillPathFor(spill, fileName), hasher));
    out.hashed.push({ at, json: bytes });
  }
  return out;
}

function spilledPart(at: number, part: unknown, bytes: Buffer, spillPath: string, hasher: Hasher): SpilledPart {
  const mimeType = partMimeType(part);
  const data = partData(part);
  // Keys in the shape's order (core/archived-parts.ts).
  return {
    at,
    kind: "spilled",
    type: partType(part),
    ...(mimeType === undefined ? {} : { mimeType }),
    ...(data === undefined ? {} : { dataChars: data.length }),
    spillBytes: bytes.length,
    spillPath,
    spillDigest: spillDigestOf(hasher, bytes),
  };
}
