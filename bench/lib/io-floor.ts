/**
 * The I/O floor of one compaction: the same bytes moved durably, with no CPU work. Read the
 * session file in 1 MiB chunks (as readSession does); append the same number of bytes in as many
 * writes as entries, then ONE fsync (the least a durable append needs, whatever the commit
 * grouping); write the same spill files through temp file + fsync + rename, then one folder
 * fsync (as io/write-spill.ts does). A compaction cannot be faster than this on this disk.
 */

import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { splitJoinedEntries } from "../../src/io/session-line.js";

export interface IoWork {
  /** Session file to read (a fresh copy, like the one compacted). */
  sessionFile: string;
  /** Folder for the scratch files. */
  scratchDir: string;
  appendedBytes: number;
  appendedEntries: number;
  /** Byte size of each spill file written. */
  spillSizes: number[];
}

export interface IoFloor {
  readMs: number;
  appendMs: number;
  spillMs: number;
  totalMs: number;
}

export async function measureIoFloor(work: IoWork): Promise<IoFloor> {
  const readMs = await timed(() => readAll(work.sessionFile));
  const appendMs = await timed(async () => appendAll(path.join(work.scratchDir, "floor-append.jsonl"), work.appendedBytes, work.appendedEntries));
  const spillMs = await timed(async () => spillAll(path.join(work.scratchDir, "floor-blobs"), work.spillSizes));
  return { readMs, appendMs, spillMs, totalMs: readMs + appendMs + spillMs };
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

async function readAll(file: string): Promise<void> {
  let bytes = 0;
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) bytes += chunk.length;
  if (bytes === 0) throw new Error(`I/O floor: ${file} is empty`);
}

function appendAll(file: string, bytes: number, entries: number): void {
  const fd = fs.openSync(file, "a");
  try {
    const each = entries > 0 ? Math.ceil(bytes / entries) : 0;
    const line = Buffer.alloc(each, 0x61);
    for (let written = 0, i = 0; i < entries && written < bytes; i++, written += each) fs.writeSync(fd, line, 0, Math.min(each, bytes - written));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function spillAll(dir: string, sizes: number[]): void {
  fs.mkdirSync(dir, { recursive: true });
  sizes.forEach((size, i) => {
    const temp = path.join(dir, `.tmp-${i}`);
    const fd = fs.openSync(temp, "wx");
    fs.writeSync(fd, Buffer.alloc(size, 0x62));
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(temp, path.join(dir, `spill-${i}.txt`));
  });
  const dirFd = fs.openSync(dir, "r");
  fs.fsyncSync(dirFd);
  fs.closeSync(dirFd);
}

/**
 * The CPU floor of this design: JSON.parse of every line of the session, which the main thread
 * must do before it can find chains. Process CPU time (ms), so another user's load on the machine
 * barely moves it: a machine-speed yardstick for the CPU-time ratios of bench:check.
 */
export function measureParseCpuMs(sessionFile: string): number {
  const text = fs.readFileSync(sessionFile, "utf8");
  const start = process.cpuUsage();
  let entries = 0;
  for (const line of text.split("\n")) if (line !== "") entries += parsedEntries(line);
  const { user, system } = process.cpuUsage(start);
  if (entries === 0) throw new Error(`parse floor: ${sessionFile} has no lines`);
  return (user + system) / 1000;
}

/** Entries on one line: real sessions hold lines where two entries were glued together, parsed piece by piece as the reader does. */
function parsedEntries(line: string): number {
  try {
    return JSON.parse(line) === null ? 0 : 1;
  } catch (error) {
    const values = error instanceof SyntaxError ? splitJoinedEntries(line) : undefined;
    if (!values) throw error;
    return values.length;
  }
}
