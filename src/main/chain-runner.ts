/**
 * Runs ChainTasks and shard scans on a piscina pool of worker threads, or inline when `workers`
 * is 0. The worker is loaded as compiled JS: Node 20 cannot run the TypeScript sources in a thread.
 */

import path from "node:path";
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import type { ChainTask, ChainTaskResult } from "../workers/chain-task.js";
import { runChainTask } from "../workers/run-chain-task.js";
import { scanShard } from "../workers/scan-shard.js";
import type { ShardScan, ShardTask } from "../workers/scan-task.js";
import { decodeShardScan, type ShardScanWire } from "../workers/shard-codec.js";

export interface ChainRunner {
  /** Worker threads in the pool; 0 = inline on the calling thread. */
  readonly workers: number;
  run(task: ChainTask): Promise<ChainTaskResult>;
  /** Reads and parses one shard of a session file (main/scan-session.ts). */
  scan(task: ShardTask): Promise<ShardScan>;
  close(): Promise<void>;
}

/**
 * Young generation of each worker thread. A worker's garbage is short-lived (a shard's or a
 * chain's parsed lines): measured on 20x1M with 2 workers, 8 MB instead of V8's default cuts the
 * process's peak RSS by ~15% (340 → 290 MB) at the same wall and CPU time.
 */
const WORKER_YOUNG_GENERATION_MB = 8;

export interface RunnerOptions {
  /** Deadline of one task in a worker (default: `taskDeadlineMs` of its size). */
  deadlineMs?: (bytes: number) => number;
}

/**
 * A worker that dies is replaced by piscina and its task rejected; one that hangs (a runaway
 * loop, a stuck read) would hold its chain and the run forever. Every task therefore has a
 * deadline, generous for its size (2 minutes, plus 10 s per MB): past it the worker is
 * terminated and the task fails, which costs only that chain (the next run heals it).
 */
export function taskDeadlineMs(bytes: number): number {
  return 120_000 + Math.ceil(bytes / 100_000) * 1_000;
}

export function createChainRunner(workers: number, options: RunnerOptions = {}): ChainRunner {
  return workers <= 0 ? inlineRunner() : poolRunner(workers, options.deadlineMs ?? taskDeadlineMs);
}

function inlineRunner(): ChainRunner {
  // One task at a time, as one worker would: a task that awaits its spill fsyncs must not let the
  // next chains start meanwhile (their spans would all be in memory at once).
  const slots = new Slots(1);
  return {
    workers: 0,
    // An "exit" or "hang" fault would end or stop the whole process inline: inline it is a throw.
    run: (task) => slots.use(() => runChainTask(task.fault === "exit" || task.fault === "hang" ? { ...task, fault: "throw" } : task)),
    scan: (task) => slots.use(() => scanShard(task)),
    close: async () => undefined,
  };
}

function poolRunner(workers: number, deadlineMs: (bytes: number) => number): ChainRunner {
  const pool = new Piscina({
    filename: workerFile(),
    minThreads: workers,
    maxThreads: workers,
    idleTimeout: 5_000,
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
  });
  // Tasks wait here, not in piscina's queue, so a deadline starts when its task starts running.
  const slots = new Slots(workers);
  const timed = <T>(task: ChainTask | ShardTask, bytes: number, transferList: ArrayBuffer[]): Promise<T> =>
    slots.use(() => pool.run(task, { transferList, signal: AbortSignal.timeout(deadlineMs(bytes)) }) as Promise<T>);
  return {
    workers,
    run: (task) => {
      const transferList = (task.encodedSlice ?? []).map((chunk) => chunk.buffer as ArrayBuffer);
      return timed<ChainTaskResult>(task, chainTaskBytes(task), transferList).catch(deadlineError(`chain ${task.chainStart}`));
    },
    scan: (task) => timed<ShardScanWire>(task, task.end - task.start, []).then(decodeShardScan, deadlineError(`shard at byte ${task.start}`)),
    close: () => pool.destroy(),
  };
}

/** At most `size` tasks at once; the others wait in order. */
class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  constructor(size: number) {
    this.free = size;
  }
  async use<T>(work: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}

/** Bytes a chain task carries or reads (messages sent as objects count by their number). */
function chainTaskBytes(task: ChainTask): number {
  if (task.fileSlice) return task.fileSlice.lines.reduce((sum, line) => sum + line.bytes, 0);
  if (task.encodedSlice) return task.encodedSlice.reduce((sum, chunk) => sum + chunk.length, 0);
  return (task.inner?.length ?? 0) * 10_000;
}

/** An aborted task says what ran out of time, not just "AbortError". */
function deadlineError(what: string): (error: unknown) => never {
  return (error) => {
    if ((error as Error | null)?.name === "AbortError") throw new Error(`${what}: the worker did not finish before its deadline and was stopped`);
    throw error;
  };
}

/** The compiled worker; under vitest this module runs from src/, so point at dist/ (built by `npm test`). */
export function workerFile(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith(".js")) return path.join(path.dirname(here), "..", "workers", "compress-chain.worker.js");
  const root = path.resolve(path.dirname(here), "..", "..");
  return path.join(root, "dist", "src", "workers", "compress-chain.worker.js");
}
