/**
 * The scan worker's half of the spool (io/spool.ts): for one freshly parsed entry, before it is
 * lightened, write what a chain task will take from it. The rules are the chain task's own
 * (core/extract-records.ts, core/spill-rule.ts), applied to every message, since the scan cannot
 * know yet which chains will be compressed.
 */

import { isObject } from "../core/entry-shapes.js";
import type { Hasher } from "../core/digest.js";
import { LIGHT_KEEP_CHARS, lightString, wellFormedJsonLength, type KnownLength } from "../core/light-value.js";
import { contentText, extractionArgs, isTextPart, isToolCallPart } from "../core/message-text.js";
import type { AgentMessage } from "../core/session-types.js";
import { shouldSpill } from "../core/spill-rule.js";
import type { LineSpool, SpoolSettings, SpoolWriter } from "../io/spool.js";
import { spillMaterial } from "./spill-material.js";

export interface SpooledEntry {
  spool: LineSpool;
  /** The output text, already measured here: lightening need not measure it again. */
  known?: KnownLength;
}

export function spoolEntry(entry: unknown, writer: SpoolWriter, settings: SpoolSettings, hasher: Hasher): SpooledEntry | undefined {
  if (!isObject(entry) || entry.type !== "message" || !isObject(entry.message)) return undefined;
  const message = entry.message as unknown as AgentMessage;
  if (message.role === "assistant") {
    const calls = [writer.shard];
    const parts = Array.isArray(message.content) ? (message.content as unknown[]) : [];
    for (let index = 0; index < parts.length; index++) {
      const part = parts[index];
      if (!isToolCallPart(part)) continue;
      const args = writer.addText(argsJson(extractionArgs(part)));
      calls.push(index, args.offset, args.bytes);
    }
    return calls.length > 1 ? { spool: { calls } } : undefined;
  }
  if (message.role !== "toolResult") return undefined;
  const content = (message as { content?: unknown }).content;
  const text = contentText(content);
  if (shouldSpill(text, settings.spillThreshold)) return spilledEntry(message, text, writer, settings, hasher);
  const json = JSON.stringify(text);
  const run = writer.addText(json);
  const spool: LineSpool = { result: [writer.shard, text.length, run.offset, run.bytes] };
  // Lightening the message gives its one text exactly this; several parts joined it does not.
  if (!isOneText(content)) spool.lightText = lightString(text, LIGHT_KEEP_CHARS, LIGHT_KEEP_CHARS, json.length);
  return { spool, known: { text, jsonLength: json.length } };
}

/** True when contentText returned the content itself or its only text part, which lightening cuts exactly as a record's text. */
function isOneText(content: unknown): boolean {
  return typeof content === "string" || (Array.isArray(content) && content.filter(isTextPart).length === 1);
}

/** JSON.stringify of args as a record holds them; `undefined` cannot occur (extractionArgs defaults to {}). */
function argsJson(args: unknown): string {
  return JSON.stringify(args) ?? "null";
}

/** An output at or above the spill threshold (well-formed, so its JSON length comes from its bytes). */
function spilledEntry(message: AgentMessage, text: string, writer: SpoolWriter, settings: SpoolSettings, hasher: Hasher): SpooledEntry {
  // The record's contentHash uses the calling tool's name; a result names the same tool (the
  // chain task checks, and recomputes in the rare case it does not).
  const toolName = (message as { toolName?: unknown }).toolName;
  const material = spillMaterial(hasher, typeof toolName === "string" ? toolName : "", text, settings.previewBytes);
  const run = writer.addBytes(material.bytes);
  const spool: LineSpool = {
    result: [writer.shard, text.length, run.offset, run.bytes],
    spill: { hashedToolName: toolName, contentHash: material.contentHash, spillDigest: material.spillDigest, resultPreview: material.resultPreview },
  };
  return { spool, known: { text, jsonLength: wellFormedJsonLength(text, material.bytes) } };
}
