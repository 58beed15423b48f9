/**
 * Executes a ShardTask: read the range, split it on byte 0x0A, classify every line exactly as the
 * streaming reader does (io/session-line.ts), and lighten what was parsed.
 */

import { performance } from "node:perf_hooks";
import { loadHasher, type Hasher } from "../core/digest.js";
import { lightenInPlace, type KnownLength } from "../core/light-value.js";
import { readRange, withReadFd } from "../io/read-range.js";
import { isObject } from "../core/entry-shapes.js";
import { classifyLine, type LineResult } from "../io/session-line.js";
import { SpoolWriter } from "../io/spool.js";
import type { ScannedLine, ShardScan, ShardTask } from "./scan-task.js";
import { spoolEntry } from "./spool-entry.js";

export async function scanShard(task: ShardTask): Promise<ShardScan> {
  const spool = task.spool ? { settings: task.spool, writer: new SpoolWriter(task.spool.dir, task.start, task.end - task.start), hasher: await loadHasher() } : undefined;
  const scan = scanLines(task, spool);
  spool?.writer.finish();
  return scan;
}

interface Spooling {
  settings: NonNullable<ShardTask["spool"]>;
  writer: SpoolWriter;
  hasher: Hasher;
}

function scanLines(task: ShardTask, spool: Spooling | undefined): ShardScan {
  const started = performance.now();
  const data = withReadFd(task.file, (fd) => readRange(fd, task.start, task.end - task.start, task.file));
  const lines: ScannedLine[] = [];
  let index = 0;
  for (let pos = 0; pos < data.length; index++) {
    const newline = data.indexOf(0x0a, pos);
    const stop = newline === -1 ? data.length : newline;
    if (stop - pos > task.maxLineBytes) return { lines, lineCount: index + 1, tooLongAt: index, busyMs: performance.now() - started };
    const line = scanLine(data.subarray(pos, stop), task.start + pos, index, newline !== -1, spool);
    if (line) lines.push(line);
    pos = stop + 1;
  }
  return { lines, lineCount: index, busyMs: performance.now() - started };
}

function scanLine(bytes: Buffer, byteOffset: number, index: number, terminated: boolean, spool: Spooling | undefined): ScannedLine | undefined {
  const result = classifyLine(bytes, byteOffset === 0);
  if (result.kind === "blank" && terminated) return undefined;
  const line: ScannedLine = { index, byteOffset, bytes: bytes.length, terminated, result };
  if (mayAlterInMsgpack(bytes)) line.mayAlter = true;
  // Before lightening: the spool takes the real bulk. Glued lines are left out (pi ignores them).
  const spooled = spool && result.kind === "value" ? spoolEntry(result.value, spool.writer, spool.settings, spool.hasher) : undefined;
  if (spooled) line.spool = spooled.spool;
  const values = valuesOf(result);
  if (values.length > 0) line.messageChars = values.map((value) => lightenValue(value, spooled?.known));
  return line;
}

/**
 * UTF-8 cannot hold a lone surrogate, so a parsed string can only have one through a `\uD…`
 * escape; a `__proto__` key needs those letters. Without either in its bytes, nothing parsed from
 * the line (nor derived from it) needs the full check. Three searches of a long line cost more
 * than the full check of its lightened entry, so long lines always get the full check.
 */
function mayAlterInMsgpack(bytes: Buffer): boolean {
  if (bytes.length > QUICK_CHECK_MAX_BYTES) return true;
  return bytes.includes("\\ud") || bytes.includes("\\uD") || bytes.includes("__proto__");
}

const QUICK_CHECK_MAX_BYTES = 16 * 1024;

function valuesOf(result: LineResult): unknown[] {
  if (result.kind === "value") return [result.value];
  if (result.kind === "joined") return result.values;
  return [];
}

/** Lightens an entry in place; returns its message's real JSON length for a message entry. */
function lightenValue(value: unknown, known: KnownLength | undefined): number | undefined {
  if (!isObject(value)) return undefined;
  const message = value.type === "message" ? value.message : undefined;
  // The message first, measured while it is lightened; the rest of the entry is small by then.
  const chars = typeof message === "object" && message !== null ? lightenInPlace(message, known) : undefined;
  lightenInPlace(value);
  return chars;
}
