/**
 * A real session file whose archive holds outputs with non-text parts, written as chainpress's
 * writer writes them (core/chain-entry.ts `buildBackfilledRecord`, core/spill-layout.ts
 * `partSpillFileName`, the parts-aware content hash): the tool results with their images in the
 * session's lines, one `context-prune-index` entry with their records and refs t1.., and each part
 * whose JSON reaches the spill threshold in its own spill file in `<session id>-blobs/`.
 */

import fs from "node:fs";
import path from "node:path";
import { nonTextParts } from "../../src/core/archived-parts.js";
import { DEFAULT_SPILL_THRESHOLD } from "../../src/core/defaults.js";
import { loadHasher } from "../../src/core/digest.js";
import type { ToolCallRecord } from "../../src/core/prune-types.js";
import { blobDirFor } from "../../src/core/spill-layout.js";
import { archivedRecordOf } from "./archived-record.js";
import { gifBytes, jpegBytes, pngBytes } from "./image-bytes.js";
import { SessionBuilder } from "./session-builder.js";

export interface PartsOutput {
  ref: string;
  toolCallId: string;
  toolName: string;
  content: unknown[];
}

export interface PartsSession {
  file: string;
  dir: string;
  blobDir: string;
  outputs: PartsOutput[];
  records: ToolCallRecord[];
  /** Entry id of each output's tool-result line, by ref (what a context edit targets). */
  resultEntryIds: Record<string, string>;
}

const image = (bytes: Buffer, mimeType: string) => ({ type: "image", data: bytes.toString("base64"), mimeType });

/**
 * The outputs: t1 one large PNG (spilled), t2 a GIF, an unknown "audio" part, a part without
 * data and a JPEG (inline),
 * t3 an image and no text, t4 text only, t5 ten small PNGs (more than one call attaches).
 */
export function partsOutputs(): PartsOutput[] {
  return [
    { ref: "t1", toolCallId: "img_big", toolName: "read", content: [{ type: "text", text: "Read image file [image/png]" }, image(pngBytes(1280, 800, 60_000, 11), "image/png")] },
    {
      ref: "t2",
      toolCallId: "img_mixed",
      toolName: "screenshot",
      content: [{ type: "text", text: "two shots" }, image(gifBytes(64, 48, 900, 12), "image/gif"), { type: "audio", data: "UklGRiQAAABXQVZF", mimeType: "audio/wav", note: "kept verbatim" }, { type: "text", text: "and a second text" }, { type: "resource", uri: "file:///tmp/notes.txt" }, image(jpegBytes(320, 200, 2_000, 0, 13), "image/jpeg")],
    },
    { ref: "t3", toolCallId: "img_only", toolName: "screenshot", content: [image(pngBytes(16, 16, 100, 14), "image/png")] },
    { ref: "t4", toolCallId: "plain", toolName: "bash", content: [{ type: "text", text: "plain text output\nline 2" }] },
    { ref: "t5", toolCallId: "img_many", toolName: "screenshot", content: [{ type: "text", text: "ten frames" }, ...Array.from({ length: 10 }, (_, i) => image(pngBytes(40 + i, 30, 200, 20 + i), "image/png"))] },
  ];
}

/** Writes the session in `dir` (its blob folder beside it) and returns what it holds; `cwd`: its header's working folder (pi opens a session only where that exists). */
export async function writePartsSession(dir: string, outputs: PartsOutput[] = partsOutputs(), name = "parts.jsonl", cwd?: string): Promise<PartsSession> {
  const hasher = await loadHasher();
  const builder = new SessionBuilder();
  if (cwd !== undefined) (builder.lines[0] as { cwd: string }).cwd = cwd;
  const file = path.join(dir, name);
  const blobDir = blobDirFor(dir, builder.sessionId);
  const records: ToolCallRecord[] = [];
  const resultEntryIds: Record<string, string> = {};
  builder.user("show me the screens");
  for (const output of outputs) {
    const args = { path: `${output.toolCallId}.png` };
    builder.message({ role: "assistant", content: [{ type: "toolCall", id: output.toolCallId, name: output.toolName, arguments: args }], stopReason: "toolUse", timestamp: builder.tick() });
    const resultTimestamp = builder.tick();
    resultEntryIds[output.ref] = builder.message({ role: "toolResult", toolCallId: output.toolCallId, toolName: output.toolName, content: output.content, isError: false, timestamp: resultTimestamp });
    records.push(archivedRecordOf({ ...output, args }, resultTimestamp, blobDir, hasher, DEFAULT_SPILL_THRESHOLD));
  }
  builder.reply("done");
  const refs = outputs.map((output, i) => ({ shortId: output.ref, toolCallId: output.toolCallId, resultTimestamp: records[i]!.resultTimestamp }));
  builder.custom("context-prune-index", { toolCalls: records, backfilled: true, refs });
  fs.writeFileSync(file, builder.toJsonl());
  return { file, dir, blobDir, outputs, records, resultEntryIds };
}

/** The output of a ref. */
export function outputOf(session: PartsSession, ref: string): PartsOutput {
  return session.outputs.find((output) => output.ref === ref)!;
}

/** The base64 data of an output's non-text parts, in content order. */
export function imageDataOf(session: PartsSession, ref: string): string[] {
  return nonTextParts(outputOf(session, ref).content)
    .map(({ part }) => part as { type: string; data: string })
    .filter((part) => part.type === "image")
    .map((part) => part.data);
}
