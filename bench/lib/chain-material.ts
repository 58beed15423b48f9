/**
 * The inputs of the per-stage benchmarks, taken from the largest chain of a real fixture: its
 * messages, their msgpack encoding, the extracted outputs, the ones big enough to spill, the
 * records and refs a worker would return, and the chain's raw JSONL bytes (for the alternative).
 */

import fs from "node:fs";
import { pack } from "msgpackr";
import { buildBackfilledRecord, buildRef } from "../../src/core/chain-entry.js";
import { detectChains } from "../../src/core/detect-chains.js";
import { outputFields, spanOutputs } from "../../src/core/extract-records.js";
import { makeProtectionPredicate } from "../../src/core/protection.js";
import type { ChainRange, SummaryToolCallRef, ToolCallRecord } from "../../src/core/prune-types.js";
import type { AgentMessage } from "../../src/core/session-types.js";
import { SpanIndex } from "../../src/core/span-index.js";
import { DEFAULT_COMPACT_OPTIONS } from "../../src/main/compact-options.js";
import { loadSessionModel, type SessionModel } from "../../src/main/session-model.js";

export type Output = ReturnType<typeof outputFields>;

export interface ChainMaterial {
  model: SessionModel;
  chain: ChainRange;
  /** Messages strictly inside the span. */
  inner: AgentMessage[];
  encoded: Uint8Array;
  outputs: Output[];
  /** Outputs at or above the spill threshold. */
  big: Output[];
  records: ToolCallRecord[];
  refs: SummaryToolCallRef[];
  /** The chain's lines as they are in the file (what a raw-bytes design would ship). */
  rawLines: Buffer;
  /** Tool-result characters of the chain (the normaliser for per-M-char costs). */
  chars: number;
}

export async function loadChainMaterial(file: string): Promise<ChainMaterial> {
  const model = await loadSessionModel(file);
  const isProtected = makeProtectionPredicate(DEFAULT_COMPACT_OPTIONS);
  const chains = detectChains(model.messages, isProtected).filter((c) => c.finalAssistantTimestamp !== null);
  const spans = new SpanIndex(model.messages);
  const sizeOf = (c: ChainRange) => c.middleOccurrenceKeys.length;
  const chain = chains.reduce((a, b) => (sizeOf(b) > sizeOf(a) ? b : a));
  const span = spans.resolve(chain)!;
  const inner = model.messages.slice(span.startIndex + 1, span.endIndex);
  const outputs = [...spanOutputs(inner, new Set(chain.protectedToolCallIds), () => false)].map(outputFields);
  const records = outputs.map((o) => buildBackfilledRecord(o));
  const refs = outputs.map((o, i) => buildRef(`t${i + 1}`, o.toolCallId, o.resultTimestamp));
  const big = outputs.filter((o) => o.resultText.length >= DEFAULT_COMPACT_OPTIONS.spillThreshold);
  const chars = outputs.reduce((n, o) => n + o.resultText.length, 0);
  return { model, chain, inner, encoded: pack(inner), outputs, big, records, refs, rawLines: rawLinesOf(model, file, inner), chars };
}

/** Bytes of the file from the first to the last line holding a message of `inner`. */
function rawLinesOf(model: SessionModel, file: string, inner: AgentMessage[]): Buffer {
  const lineOfMessage = new Map<AgentMessage, number>();
  for (const entry of model.branch) {
    const message = (entry as { message?: AgentMessage }).message;
    const line = model.loaded.lineOf(entry);
    if (message && line !== undefined) lineOfMessage.set(message, line);
  }
  const first = lineOfMessage.get(inner[0]!)!;
  const last = lineOfMessage.get(inner[inner.length - 1]!)!;
  const bytes = fs.readFileSync(file);
  const start = offsetOfLine(bytes, first);
  return bytes.subarray(start, offsetOfLine(bytes, last + 1));
}

/** Byte offset of 1-based line `line`. */
function offsetOfLine(bytes: Buffer, line: number): number {
  let offset = 0;
  for (let n = 1; n < line; n++) offset = bytes.indexOf(0x0a, offset) + 1;
  return offset;
}
