/**
 * The shard scan's unit of work: a byte range of a session file that starts at a line boundary
 * and ends at one (or at the end of the file). The worker reads and parses it and returns each
 * line's result with its long strings lightened (core/light-value.ts), so what comes back to the
 * main thread is proportional to the number of entries, not to the bytes of tool output.
 */

import type { OutputLiteral } from "../io/output-literal.js";
import type { LineResult } from "../io/session-line.js";

export interface ShardTask {
  kind: "scan-shard";
  file: string;
  /** Offset of the shard's first byte (0 or just after a "\n"). */
  start: number;
  /** Offset just past the shard's last byte (just after a "\n", or the file size). */
  end: number;
  /** Lines longer than this many bytes are refused. */
  maxLineBytes: number;
}

/** One line of the shard; blank terminated lines are left out. */
export interface ScannedLine {
  /** 0-based index of the line within the shard. */
  index: number;
  byteOffset: number;
  bytes: number;
  terminated: boolean;
  result: LineResult;
  /** Per value of the result: the real JSON length of a message entry's `message`. */
  messageChars?: Array<number | undefined>;
  /** A tool result's text as one literal of the line: a chain task copies it from the file without parsing the line. */
  output?: OutputLiteral;
}

export interface ShardScan {
  /** In order; on the main thread, decoded as they are iterated (workers/shard-codec.ts). */
  lines: Iterable<ScannedLine>;
  /** Physical lines in the shard (blank ones included). */
  lineCount: number;
  /** Index of a line longer than `maxLineBytes`; lines from there on are not scanned. */
  tooLongAt?: number;
  /** Worker time spent, in milliseconds. */
  busyMs: number;
}
