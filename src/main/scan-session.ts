/**
 * The parallel scan of a session file: cut it into shards at line boundaries, let the workers read
 * and parse them (workers/scan-shard.ts), and feed their lightened lines, in file order, into the
 * same SessionBuilder the streaming reader uses. The main thread sees entries, never the bytes of
 * tool output, and holds memory proportional to the number of entries.
 */

import { stat } from "node:fs/promises";
import { SessionBuilder } from "../io/session-builder.js";
import type { LoadedSession } from "../io/loaded-session.js";
import { driveSteps, pauseIfDue } from "./cooperative.js";
import { SessionFileError } from "../io/session-errors.js";
import { shardBounds } from "../io/shard-bounds.js";
import { guidedShardSizes } from "../core/shard-sizes.js";
import { DEFAULT_MAX_LINE_BYTES } from "../io/read-session.js";
import type { ShardScan } from "../workers/scan-task.js";
import type { ChainRunner } from "./chain-runner.js";

export interface ScanOptions {
  maxLineBytes?: number;
  /** Every shard this size (tests); by default core/shard-sizes.ts's sizes for the runner's workers. */
  shardBytes?: number;
}

export interface ScanStats {
  /** Worker time spent reading and parsing, summed over shards. */
  workerMs: number;
  shards: number;
}

/** Reads, validates and (in memory) migrates a session file, lightened (core/light-value.ts). */
export async function scanSession(file: string, runner: ChainRunner, opts: ScanOptions = {}, stats?: ScanStats): Promise<LoadedSession> {
  const size = await sizeOf(file);
  const maxLineBytes = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const shards = await shardBounds(file, size, opts.shardBytes ?? guidedShardSizes(size, runner.workers)).catch((error: unknown) => {
    throw ioError(file, error);
  });
  const builder = new SessionBuilder(file, { skipMalformed: false, lightened: true });
  // Results are taken in file order; a bounded window keeps the pool busy without piling them up.
  const window = Math.max(2, runner.workers * 2);
  const pending: Array<Promise<ShardScan>> = [];
  const start = (i: number) => {
    const shard = shards[i]!;
    const scan = runner.scan({ kind: "scan-shard", file, start: shard.start, end: shard.end, maxLineBytes });
    scan.catch(() => undefined); // awaited in order below; this only keeps it from being "unhandled" meanwhile
    pending[i] = scan;
  };
  for (let i = 0; i < Math.min(window, shards.length); i++) start(i);
  let firstLine = 1;
  for (let i = 0; i < shards.length; i++) {
    const scan = await pending[i]!.catch((error: unknown) => {
      throw ioError(file, error);
    });
    delete pending[i];
    if (i + window < shards.length) start(i + window);
    if (stats) {
      stats.workerMs += scan.busyMs;
      stats.shards++;
    }
    for (const line of scan.lines) {
      const meta = { line: firstLine + line.index, byteOffset: line.byteOffset, bytes: line.bytes, terminated: line.terminated };
      builder.accept(meta, line.result, line.messageChars, line.output);
      await pauseIfDue();
    }
    if (scan.tooLongAt !== undefined) {
      throw new SessionFileError("line-too-long", file, `line is longer than ${maxLineBytes} bytes`, firstLine + scan.tooLongAt);
    }
    firstLine += scan.lineCount;
  }
  return driveSteps(builder.finishSteps(size));
}

async function sizeOf(file: string): Promise<number> {
  try {
    const info = await stat(file);
    if (info.isDirectory()) throw new SessionFileError("io", file, "is a folder, not a session file");
    return info.size;
  } catch (error) {
    throw ioError(file, error);
  }
}

function ioError(file: string, error: unknown): SessionFileError {
  if (error instanceof SessionFileError) return error;
  const what = error instanceof Error ? error.message : String(error);
  if ((error as NodeJS.ErrnoException | null)?.code === "ENOENT") return new SessionFileError("not-found", file, "no such file", undefined, error);
  return new SessionFileError("io", file, `cannot read: ${what}`, undefined, error);
}
