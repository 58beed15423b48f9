/**
 * The scan worker's half of the spool (io/spool.ts): for one freshly parsed entry, before it is
 * lightened, write what a chain task will take from it. The rules are the chain task's own
 * (core/extract-records.ts, core/spill-rule.ts), applied to every message, since the scan cannot
 * know yet which chains will be compressed.
 */

import { isObject } from "../core/entry-shapes.js";
import type { Hasher } from "../core/digest.js";
import { LIGHT_KEEP_CHARS, lightString, wellFormedJsonLength, type KnownLength } from "../core/light-value.js";
import { contentText, extractionArgs, isToolCallPart } from "../core/message-text.js";
import type { AgentMessage } from "../core/session-types.js";
import { shouldSpill } from "../core/spill-rule.js";
import type { LineSpool, ResultSpool, SpoolSettings, SpoolWriter } from "../io/spool.js";
import { spillMaterial } from "./spill-material.js";

export interface SpooledEntry {
  spool: LineSpool;
  /** The output text, already serialised here: lightening need not measure it again. */
  known?: KnownLength;
}

export function spoolEntry(entry: unknown, writer: SpoolWriter, settings: SpoolSettings, hasher: Hasher): SpooledEntry | undefined {
  if (!isObject(entry) || entry.type !== "message" || !isObject(entry.message)) return undefined;
  const message = entry.message as unknown as AgentMessage;
  if (message.role === "assistant") {
    const calls: NonNullable<LineSpool["calls"]> = [];
    const parts = Array.isArray(message.content) ? (message.content as unknown[]) : [];
    for (let index = 0; index < parts.length; index++) {
      const part = parts[index];
      if (isToolCallPart(part)) calls.push({ part: index, args: writer.addText(argsJson(extractionArgs(part))) });
    }
    return calls.length > 0 ? { spool: { shard: writer.shard, calls } } : undefined;
  }
  if (message.role !== "toolResult") return undefined;
  const text = contentText((message as { content?: unknown }).content);
  if (!shouldSpill(text, settings.spillThreshold)) {
    const json = JSON.stringify(text);
    const result = { chars: text.length, lightText: lightString(text, LIGHT_KEEP_CHARS, LIGHT_KEEP_CHARS, json.length), json: writer.addText(json) };
    return { spool: { shard: writer.shard, result }, known: { text, jsonLength: json.length } };
  }
  return spilledEntry(message, text, writer, settings, hasher);
}

/** JSON.stringify of args as a record holds them; `undefined` cannot occur (extractionArgs defaults to {}). */
function argsJson(args: unknown): string {
  return JSON.stringify(args) ?? "null";
}

/** An output at or above the spill threshold (well-formed, so its JSON length comes from its bytes). */
function spilledEntry(message: AgentMessage, text: string, writer: SpoolWriter, settings: SpoolSettings, hasher: Hasher): SpooledEntry {
  const spooled: ResultSpool = { chars: text.length };
  // The record's contentHash uses the calling tool's name; a result names the same tool (the
  // chain task checks, and recomputes in the rare case it does not).
  const toolName = (message as { toolName?: unknown }).toolName;
  const material = spillMaterial(hasher, typeof toolName === "string" ? toolName : "", text, settings.previewBytes);
  spooled.spill = {
    bytes: writer.addBytes(material.bytes),
    hashedToolName: toolName,
    contentHash: material.contentHash,
    spillDigest: material.spillDigest,
    resultPreview: material.resultPreview,
  };
  return { spool: { shard: writer.shard, result: spooled }, known: { text, jsonLength: wellFormedJsonLength(text, material.bytes) } };
}
