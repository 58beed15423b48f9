/**
 * A real session file whose tool results hold images, archived as chainpress archives them
 * (issue 46): each archived record made by buildBackfilledRecord with its `parts`, small parts
 * inline, large ones in spill files of their own (written, digested) in the session's blob folder,
 * the content hash covering every part. Closed chains get a chain entry (buildChainEntry);
 * an open chain's archived outputs get none, so the render stubs them.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildBackfilledIndexData, buildChainEntry, buildRef } from "../../src/core/chain-entry.js";
import { CUSTOM_TYPE_CHAIN, CUSTOM_TYPE_INDEX } from "../../src/core/custom-types.js";
import { detectChains } from "../../src/core/detect-chains.js";
import { loadHasher } from "../../src/core/digest.js";
import type { SummaryToolCallRef, ToolCallRecord } from "../../src/core/prune-types.js";
import type { AgentMessage } from "../../src/core/session-types.js";
import { blobDirFor } from "../../src/core/spill-layout.js";
import { archivedRecordOf } from "./archived-record.js";
import { SessionBuilder } from "./session-builder.js";

/** A tool call and its result's content parts (text and images). */
export interface PartsCall {
  id: string;
  name: string;
  args: unknown;
  content: unknown[];
}

/** A part's JSON text at or past this length goes to a spill file of its own (the test's spill threshold). */
export const PART_SPILL_CHARS = 8_000;

export const imagePart = (bytes: Buffer, mimeType = "image/png") => ({ type: "image", data: bytes.toString("base64"), mimeType });
export const textPart = (text: string) => ({ type: "text", text });

/** Builds the messages; `archive` then appends the index and chain entries for what it names. */
export class ImageSession {
  readonly s = new SessionBuilder();
  private readonly closed: Array<{ calls: PartsCall[] }> = [];
  private readonly open: PartsCall[] = [];

  /** A closed chain: user, one call per turn, a closing reply. */
  chain(prompt: string, calls: PartsCall[]): this {
    this.s.user(prompt);
    for (const call of calls) this.turn(call);
    this.s.reply(`done: ${prompt}`);
    this.closed.push({ calls });
    return this;
  }

  /** An open chain (no reply): its calls are archived without a chain entry. */
  openChain(prompt: string, calls: PartsCall[]): this {
    this.s.user(prompt);
    for (const call of calls) this.turn(call);
    this.open.push(...calls);
    return this;
  }

  private turn(call: PartsCall): void {
    this.s.message({ role: "assistant", content: [{ type: "toolCall", id: call.id, name: call.name, arguments: call.args }], stopReason: "toolUse", timestamp: this.s.tick() });
    this.s.message({ role: "toolResult", toolCallId: call.id, toolName: call.name, content: call.content, isError: false, timestamp: this.s.tick() });
  }

  /** Writes `<dir>/session.jsonl` with every chain archived (refs t1… in call order); returns its path. */
  async write(dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-images-"))): Promise<string> {
    const file = path.join(dir, "session.jsonl");
    const blobDir = blobDirFor(dir, this.s.sessionId);
    const messages = this.s.lines.filter((line: any) => line.type === "message").map((line: any) => line.message as AgentMessage);
    const results = new Map(messages.filter((m) => m.role === "toolResult").map((m: any) => [m.toolCallId as string, m]));
    const chains = detectChains(messages);
    let refCount = 0;
    const hasher = await loadHasher();
    const archiveCalls = async (calls: PartsCall[]) => {
      const records: ToolCallRecord[] = [];
      const refs: SummaryToolCallRef[] = [];
      for (const call of calls) {
        const result = results.get(call.id)!;
        records.push(archivedRecordOf({ toolCallId: call.id, toolName: call.name, args: call.args, content: call.content }, result.timestamp as number, blobDir, hasher, PART_SPILL_CHARS));
        refs.push(buildRef(`t${++refCount}`, call.id, result.timestamp as number));
      }
      this.s.custom(CUSTOM_TYPE_INDEX, buildBackfilledIndexData(records, refs));
      return refs.map((ref) => ref.shortId);
    };
    for (const [i, chain] of this.closed.entries()) {
      const toolRefs = await archiveCalls(chain.calls);
      this.s.custom(CUSTOM_TYPE_CHAIN, buildChainEntry({ chain: chains[i]!, blockId: `b${i + 1}`, toolRefs, compressedAt: this.s.clock, rangeSummaryText: `chain ${i + 1}: ${chain.calls.length} calls`, deterministic: true }));
    }
    if (this.open.length > 0) await archiveCalls(this.open);
    fs.writeFileSync(file, this.s.toJsonl());
    return file;
  }
}
