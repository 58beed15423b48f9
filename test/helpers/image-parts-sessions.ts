/**
 * Sessions whose tool results hold content parts other than text (screenshots, unknown kinds),
 * and a check, independent of chainpress, that every archived part is the session's original
 * part: inline parts equal it, a spilled part's file holds exactly its JSON text.
 */

import fs from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { jsonText, nestsDeeperThan } from "../../src/core/json-text.js";
import { originalToolResults } from "./cli-harness.js";
import { pngBytes } from "./image-bytes.js";
import type { SessionBuilder } from "./session-builder.js";

export interface PartsCall {
  id: string;
  name?: string;
  args?: unknown;
  content: unknown[];
}

/** A closed chain: user, one call per turn with the given result content, closing reply. */
export function partsChain(s: SessionBuilder, prompt: string, calls: readonly PartsCall[]): void {
  s.user(prompt);
  for (const call of calls) {
    const name = call.name ?? "read";
    s.message({ role: "assistant", content: [{ type: "toolCall", id: call.id, name, arguments: call.args ?? { path: `/shots/${call.id}.png` } }], stopReason: "toolUse", timestamp: s.tick() });
    s.message({ role: "toolResult", toolCallId: call.id, toolName: name, content: call.content, isError: false, timestamp: s.tick() });
  }
  s.reply(`done: ${prompt}`);
}

/** pi's `read` text for an image. */
export const READ_IMAGE_TEXT = "Read image file [image/png]";

/** An image part as pi's `read` returns it: a real PNG with `filler` bytes of noise, base64. */
export function screenshot(seed: number, filler = 75_000, width = 640, height = 400): { type: "image"; data: string; mimeType: string } {
  return { type: "image", data: pngBytes(width, height, filler, seed).toString("base64"), mimeType: "image/png" };
}

/** Occurrence key → the result's content parts that are not text, with their index, as the session line holds them. */
export function originalParts(file: string): Map<string, Array<{ at: number; part: unknown }>> {
  const found = new Map<string, Array<{ at: number; part: unknown }>>();
  for (const { key, content } of originalToolResults(file)) {
    if (!Array.isArray(content)) continue;
    const parts = content.map((part: unknown, at) => ({ at, part })).filter(({ part }) => !isText(part));
    if (parts.length > 0) found.set(key, parts);
  }
  return found;
}

function isText(part: unknown): boolean {
  const p = part as { type?: unknown; text?: unknown } | null;
  return typeof p === "object" && p !== null && p.type === "text" && typeof p.text === "string";
}

export interface ArchivedPartJson {
  at: number;
  kind: string;
  part?: unknown;
  spillPath?: string;
  spillBytes?: number;
  type?: string;
  mimeType?: string;
  dataChars?: number;
}

/** Every index record of the file, in order. */
export function indexRecords(file: string): Array<Record<string, any>> {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.includes('"customType":"context-prune-index"'))
    .flatMap((line) => {
      try {
        return (JSON.parse(line) as { data: { toolCalls: Array<Record<string, any>> } }).data.toolCalls;
      } catch {
        return []; // a torn last line
      }
    });
}

/**
 * Checks each record's parts against the session's original parts (every non-text part, in
 * order; a spilled one's file in `blobDir` byte for byte the part's JSON text); returns how many
 * parts were checked.
 */
export function expectPartsArchived(file: string, blobDir: string): number {
  const originals = originalParts(file);
  let checked = 0;
  for (const record of indexRecords(file)) {
    const key = `${record.toolCallId}@${record.resultTimestamp}`;
    const expected = originals.get(key) ?? [];
    const parts = (record.parts ?? []) as ArchivedPartJson[];
    expect(parts.map((p) => p.at), `parts of ${key}`).toEqual(expected.map((p) => p.at));
    parts.forEach((archived, i) => {
      const original = expected[i]!.part;
      if (archived.kind === "inline") {
        expect(jsonText(archived.part), `inline part ${i} of ${key}`).toBe(jsonText(original));
      } else {
        expect(archived.kind).toBe("spilled");
        const bytes = fs.readFileSync(path.join(blobDir, path.basename(archived.spillPath!)));
        expect(bytes.equals(Buffer.from(jsonText(original), "utf8")), `spill file of part ${i} of ${key} is the part's JSON`).toBe(true);
        // Compared as values too, where the comparison does not run out of stack.
        if (!nestsDeeperThan(original, 1000)) expect(JSON.parse(bytes.toString("utf8"))).toStrictEqual(original);
        expect(archived.spillBytes).toBe(bytes.length);
      }
      checked++;
    });
  }
  return checked;
}
