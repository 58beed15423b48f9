/**
 * The scan's spool: while a worker parses a shard it also writes, into one temporary file per
 * shard, what a chain task will need of each entry's bulk in the form it will be written in —
 * each tool call's arguments as JSON, each tool output as a JSON string (or, for an output that
 * will be spilled, as the spill file's UTF-8 bytes). A chain task then assembles its index entry
 * from these bytes instead of reading, decoding and parsing the session's lines a second time
 * (profiled: decoding and parsing were half the CPU of a compaction, paid twice). The main thread
 * only carries offsets; the bytes go from a scan worker to a chain worker through the page cache.
 *
 * The spool lives for one compaction and is deleted after it (sweep-leftovers removes one whose
 * process died).
 */

import fs from "node:fs";
import path from "node:path";
import { ByteSink } from "../core/byte-sink.js";
import { readInto, withReadFd } from "./read-range.js";

/** Where the scan spools, and the spill rule it must apply as the chain tasks will. */
export interface SpoolSettings {
  dir: string;
  /** Outputs of at least this many UTF-16 units are spooled as spill bytes. */
  spillThreshold: number;
  /** UTF-8 bytes of a spilled output kept inline as its preview. */
  previewBytes: number;
}

/** A run of bytes in a shard's spool file. */
export interface SpoolRef {
  offset: number;
  bytes: number;
}

/**
 * What the spool holds for one message entry. Numbers are packed in flat arrays: the main thread
 * receives one of these per line and keeps it for every entry, and each object costs it decoding
 * time and memory (measured at 20x1M: packing them flat cut the main thread's decoding of the
 * scan results from ~430 to ~250 ms).
 * A shard is named by its first byte in the session file, which names its spool file.
 */
export interface LineSpool {
  /** An assistant message: its shard, then for each tool-call part its content index and the offset and length of its extraction args' JSON. */
  calls?: number[];
  /**
   * A tool result: its shard, the output text's UTF-16 length (message-text's contentText), and
   * the offset and length of the text's JSON, or, with `spill`, of the spill file's bytes.
   */
  result?: [shard: number, chars: number, offset: number, bytes: number];
  /**
   * The text as a lightened record carries it, when the lightened message does not already hold
   * exactly that (an output made of several text parts).
   */
  lightText?: string;
  /** At or above the spill threshold: what is derived from the text. */
  spill?: SpillFacts;
}

export interface SpillFacts {
  /** The result message's own `toolName`, which `contentHash` was computed with. */
  hashedToolName: unknown;
  contentHash: string;
  spillDigest: string;
  resultPreview: string;
}

/** The spool file of the shard starting at byte `start` of the session file. */
export function spoolFileFor(dir: string, start: number): string {
  return path.join(dir, `shard-${start}.spool`);
}

/**
 * Collects a shard's spooled bytes in memory, written with one call at the end of the shard. The
 * buffer is kept for the thread's next shard: a shard's spool is about the shard's size, and
 * growing a fresh buffer for each one was measurable copying.
 */
const SPARE_MAX_BYTES = 16 * 1024 * 1024;

export class SpoolWriter {
  private static spare: Buffer | undefined;
  private readonly sink: ByteSink;

  readonly file: string;

  constructor(
    dir: string,
    readonly shard: number,
    expectedBytes: number,
  ) {
    this.file = spoolFileFor(dir, shard);
    this.sink = new ByteSink(expectedBytes, SpoolWriter.spare);
    SpoolWriter.spare = undefined;
  }

  /** Appends `text` as UTF-8. */
  addText(text: string): SpoolRef {
    const offset = this.sink.length;
    return { offset, bytes: this.sink.addText(text) };
  }

  addBytes(bytes: Uint8Array): SpoolRef {
    const offset = this.sink.length;
    return { offset, bytes: this.sink.addBytes(bytes) };
  }

  /** Writes what was added (nothing when nothing was). */
  finish(): void {
    try {
      if (this.sink.length > 0) fs.writeFileSync(this.file, this.sink.bytes(), { mode: 0o600 });
    } catch (error) {
      // Said as such: the error crosses to the main thread as a plain Error (a full disk, a
      // removed folder), and must not read as a problem with the session file.
      throw new Error(`${SPOOL_WRITE_FAILED} ${this.file}: ${(error as Error).message}`);
    }
    const buffer = this.sink.release();
    SpoolWriter.spare = buffer.length <= SPARE_MAX_BYTES ? buffer : undefined;
  }
}

/** A spooled run: its shard, offset and length. */
export interface SpooledRun {
  shard: number;
  offset: number;
  bytes: number;
}

/** Reads spooled runs, one read per shard file for all the runs asked of it. */
export function readSpooled(dir: string, wanted: readonly SpooledRun[]): Buffer[] {
  const out: Buffer[] = new Array(wanted.length);
  const byShard = new Map<number, number[]>();
  wanted.forEach((run, i) => {
    const list = byShard.get(run.shard);
    if (list) list.push(i);
    else byShard.set(run.shard, [i]);
  });
  for (const [shard, indices] of byShard) {
    let from = Number.POSITIVE_INFINITY;
    let to = 0;
    for (const i of indices) {
      from = Math.min(from, wanted[i]!.offset);
      to = Math.max(to, wanted[i]!.offset + wanted[i]!.bytes);
    }
    const file = spoolFileFor(dir, shard);
    const data = withReadFd(file, (fd) => readFresh(fd, from, to - from, file));
    for (const i of indices) out[i] = data.subarray(wanted[i]!.offset - from, wanted[i]!.offset - from + wanted[i]!.bytes);
  }
  return out;
}

/** Bytes in a buffer of their own: the results outlive the next read (unlike read-range's scratch). */
function readFresh(fd: number, offset: number, length: number, file: string): Buffer {
  return readInto(fd, Buffer.allocUnsafeSlow(length), offset, file);
}

/** A fresh spool folder for one compaction, named after this process (see sweep-leftovers). */
export function createSpoolDir(parent: string, sessionFile: string): string {
  return fs.mkdtempSync(path.join(parent, `${SPOOL_PREFIX}${path.basename(sessionFile)}.${process.pid}-`));
}

export function removeSpoolDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

const SPOOL_PREFIX = ".chainpress-spool.";

/** How a failed spool write begins its message (main/scan-session.ts reports it as it is). */
export const SPOOL_WRITE_FAILED = "cannot write the scan's spool file";

/** The pid in a spool folder's name written for `sessionFile`, or undefined for any other name. */
export function spoolWriterPid(name: string, sessionFile: string): number | undefined {
  const prefix = `${SPOOL_PREFIX}${path.basename(sessionFile)}.`;
  if (!name.startsWith(prefix)) return undefined;
  const match = /^(\d+)-[^.]+$/.exec(name.slice(prefix.length));
  return match ? Number(match[1]) : undefined;
}
