/** Counters and per-stage timings of one compressEligible pass (the "where does time go" report). */

import type { Steps } from "../core/steps.js";
import { performance } from "node:perf_hooks";
import type { TaskFigures, TaskTimings } from "../workers/chain-task.js";
import type { AppendEntry } from "./append-entry.js";

/** Stages timed on the main thread. */
export type MainStage = "plan" | "encode" | "append";

export class CompressStats {
  recordsArchived = 0;
  spilledFiles = 0;
  spilledBytes = 0;
  archivedChars = 0;
  appendedEntries = 0;
  /** Chains a worker read from the session file, though their messages were in memory (a "memory" ChainSource's linesOnDisk). */
  chainsFromFile = 0;
  /** Milliseconds per stage; worker stages are summed over tasks (CPU time across threads). */
  readonly stageMs: Record<MainStage | keyof TaskTimings, number> = {
    plan: 0,
    encode: 0,
    append: 0,
    decode: 0,
    extract: 0,
    hash: 0,
    spill: 0,
    body: 0,
  };

  /** When (performance.now()) the first chain task started in a worker, and the last one's work came back. */
  readonly tasks: { firstStart?: number; lastEnd?: number } = {};

  /** `steps` with the time of each slice (not the pauses between them) counted to `stage`. */
  *timeSteps<T>(stage: MainStage, steps: Steps<T>): Steps<T> {
    for (;;) {
      const start = performance.now();
      const next = steps.next();
      this.stageMs[stage] += performance.now() - start;
      if (next.done) return next.value;
      yield;
    }
  }

  /** Wrap an appender so its time and count are recorded. */
  timedAppend(append: AppendEntry): AppendEntry {
    return async (customType, data, dataJson) => {
      const start = performance.now();
      try {
        await append(customType, data, dataJson);
        this.appendedEntries++;
      } finally {
        this.stageMs.append += performance.now() - start;
      }
    };
  }

  /** Wrap a sync (fsync) so its time counts as append time. */
  timedSync(sync: () => Promise<void>): () => Promise<void> {
    return async () => {
      const start = performance.now();
      try {
        await sync();
      } finally {
        this.stageMs.append += performance.now() - start;
      }
    };
  }

  noteTaskStart(): void {
    this.tasks.firstStart ??= performance.now();
  }

  noteTaskEnd(): void {
    this.tasks.lastEnd = performance.now();
  }

  /** A task's figures, with the records it archived. */
  addTask(result: TaskFigures & { records: readonly unknown[] }): void {
    this.recordsArchived += result.records.length;
    this.spilledFiles += result.spilledFiles;
    this.spilledBytes += result.spilledBytes;
    this.archivedChars += result.archivedChars;
    for (const [stage, ms] of Object.entries(result.timings) as Array<[keyof TaskTimings, number]>) this.stageMs[stage] += ms;
  }
}
