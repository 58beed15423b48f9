/**
 * Executes a ShardTask: read the range, split it on byte 0x0A, classify every line exactly as the
 * streaming reader does (io/session-line.ts), and lighten what was parsed.
 */

import { performance } from "node:perf_hooks";
import { lightenInPlace } from "../core/light-value.js";
import { readRange, withReadFd } from "../io/read-range.js";
import { isObject } from "../core/entry-shapes.js";
import { classifyLine, type LineResult } from "../io/session-line.js";
import type { ScannedLine, ShardScan, ShardTask } from "./scan-task.js";

export function scanShard(task: ShardTask): ShardScan {
  const started = performance.now();
  const data = withReadFd(task.file, (fd) => readRange(fd, task.start, task.end - task.start, task.file));
  const lines: ScannedLine[] = [];
  let index = 0;
  for (let pos = 0; pos < data.length; index++) {
    const newline = data.indexOf(0x0a, pos);
    const stop = newline === -1 ? data.length : newline;
    if (stop - pos > task.maxLineBytes) return { lines, lineCount: index + 1, tooLongAt: index, busyMs: performance.now() - started };
    const line = scanLine(data.subarray(pos, stop), task.start + pos, index, newline !== -1);
    if (line) lines.push(line);
    pos = stop + 1;
  }
  return { lines, lineCount: index, busyMs: performance.now() - started };
}

function scanLine(bytes: Buffer, byteOffset: number, index: number, terminated: boolean): ScannedLine | undefined {
  const result = classifyLine(bytes, byteOffset === 0);
  if (result.kind === "blank" && terminated) return undefined;
  const line: ScannedLine = { index, byteOffset, bytes: bytes.length, terminated, result };
  const values = valuesOf(result);
  if (values.length > 0) line.messageChars = values.map(lightenValue);
  return line;
}

function valuesOf(result: LineResult): unknown[] {
  if (result.kind === "value") return [result.value];
  if (result.kind === "joined") return result.values;
  return [];
}

/** Lightens an entry in place; returns its message's real JSON length for a message entry. */
function lightenValue(value: unknown): number | undefined {
  if (!isObject(value)) return undefined;
  const message = value.type === "message" ? value.message : undefined;
  // The message first, measured while it is lightened; the rest of the entry is small by then.
  const chars = typeof message === "object" && message !== null ? lightenInPlace(message) : undefined;
  lightenInPlace(value);
  return chars;
}
