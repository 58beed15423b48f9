/**
 * The record chainpress's writer keeps for one output, made here from the session's own content
 * (for sessions whose archive a test writes itself): its text as upstream keeps it, its other parts
 * inline, or each in a spill file of its own (written to `blobDir`) from `spillChars` JSON
 * characters on, and the content hash covering every part.
 */

import fs from "node:fs";
import path from "node:path";
import { nonTextParts, type ArchivedPart } from "../../src/core/archived-parts.js";
import { buildBackfilledRecord } from "../../src/core/chain-entry.js";
import { contentHashWithParts, textHash } from "../../src/core/content-hash.js";
import { spillDigestOf, type Hasher } from "../../src/core/digest.js";
import { jsonText } from "../../src/core/json-text.js";
import { contentText } from "../../src/core/message-text.js";
import { occurrenceKey } from "../../src/core/occurrence-key.js";
import type { ToolCallRecord } from "../../src/core/prune-types.js";
import { partSpillFileName } from "../../src/core/spill-layout.js";

export interface OutputToArchive {
  toolCallId: string;
  toolName: string;
  args: unknown;
  content: unknown[];
}

export function archivedRecordOf(output: OutputToArchive, resultTimestamp: number, blobDir: string, hasher: Hasher, spillChars: number): ToolCallRecord {
  const resultText = contentText(output.content);
  const fields = { toolCallId: output.toolCallId, toolName: output.toolName, args: output.args, resultText, isError: false, resultTimestamp };
  const found = nonTextParts(output.content);
  if (found.length === 0) return buildBackfilledRecord(fields);
  const key = occurrenceKey(output.toolCallId, resultTimestamp);
  const parts: ArchivedPart[] = found.map(({ at, part }) => {
    const json = jsonText(part)!;
    if (json.length < spillChars) return { at, kind: "inline", part };
    const bytes = Buffer.from(json, "utf8");
    fs.mkdirSync(blobDir, { recursive: true });
    const spillPath = path.join(blobDir, partSpillFileName(hasher, key, at));
    fs.writeFileSync(spillPath, bytes);
    const { type, data, mimeType } = part as { type: string; data?: string; mimeType?: string };
    return { at, kind: "spilled", type, ...(mimeType !== undefined ? { mimeType } : {}), ...(data !== undefined ? { dataChars: data.length } : {}), spillBytes: bytes.length, spillPath, spillDigest: spillDigestOf(hasher, bytes) };
  });
  const contentHash = contentHashWithParts(textHash(output.toolName, resultText), found.map(({ at, part }) => ({ at, json: jsonText(part)! })));
  return buildBackfilledRecord(fields, undefined, { contentHash, parts });
}
