/**
 * The pool of worker threads (piscina) that runs ChainTasks and shard scans. Kept apart from the
 * inline runner, which loads every worker module into the calling thread: a caller can start the
 * pool's threads first and load the rest meanwhile (the CLI does). The worker is loaded as
 * compiled JS: Node 20 cannot run the TypeScript sources in a thread.
 */

import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Piscina } from "piscina";
import type { ChainTask, ChainTaskResult } from "../workers/chain-task.js";
import type { ShardTask } from "../workers/scan-task.js";
import { sliceBytes } from "../workers/file-slice-columns.js";
import { decodeShardScan, type ShardScanWire } from "../workers/shard-codec.js";
import { PoolBoot } from "./pool-boot.js";
import { SearchDeadlineError, taskDeadlineMs, type ChainRunner, type RunnerOptions, type SearchDeadline } from "./runner-contract.js";
import type { SearchTask, SearchTaskResult } from "../workers/search-task.js";
import { Slots } from "./task-slots.js";

/**
 * Young generation of each worker thread. A worker's garbage is short-lived (a shard's or a chain's
 * parsed lines), and this young generation rather than V8's default lowers the process's peak RSS
 * at the same wall and CPU time (bench/RESULTS.md). A process started with `--max-semi-space-size`
 * (the `chainpress` executable) overrides it: V8's flag wins.
 */
const WORKER_YOUNG_GENERATION_MB = 8;

/** piscina, loaded by the first pool started: an inline run (and `--help`) never loads its modules. */
function loadPiscina(): typeof import("piscina") {
  return createRequire(import.meta.url)("piscina") as typeof import("piscina");
}

/** A pool of `workers` threads, started now. */
export function startPool(workers: number, options: RunnerOptions = {}): ChainRunner {
  const deadlineMs = options.deadlineMs ?? taskDeadlineMs;
  const filename = options.workerFile ?? workerFile();
  // Checked here: a thread that cannot find its module makes piscina emit errors with no task to
  // fail (the process crashed on the first one) and leave later tasks waiting forever.
  if (!fs.existsSync(filename)) throw new Error(`the worker threads' module ${filename} is missing: chainpress is not fully built (run "npm run build" in its folder)`);
  const pool = new (loadPiscina().Piscina)({
    filename,
    minThreads: workers,
    maxThreads: workers,
    idleTimeout: 5_000,
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
  });
  const boot = new PoolBoot(pool);
  // Tasks wait here, not in piscina's queue, so a deadline starts when its task starts running.
  const slots = new Slots(workers);
  const timed = <T>(bytes: number, start: () => { task: ChainTask | ShardTask; transferList: ArrayBuffer[] }): Promise<T> =>
    slots.use(() => {
      const { task, transferList } = start();
      return pool.run(task, { transferList, signal: AbortSignal.timeout(deadlineMs(bytes)) }) as Promise<T>;
    });
  return {
    workers,
    run: (task, onStart) =>
      timed<ChainTaskResult>(chainTaskBytes(task), () => chainTaskMove(task, onStart?.().indexRoom)).catch(deadlineError(`chain ${task.chainStart}`)),
    scan: (task) => timed<ShardScanWire>(task.end - task.start, () => ({ task, transferList: [] })).then(decodeShardScan, deadlineError(`shard at byte ${task.start}`)),
    search: (task, deadline) => searchOn(pool, slots, task, deadline),
    close: async () => {
      await boot.settled();
      await pool.destroy();
    },
  };
}

/** One search task on the pool, stopped (its thread terminated) at its deadline. */
export function searchOn(pool: Piscina, slots: Slots, task: SearchTask, deadline: SearchDeadline): Promise<SearchTaskResult> {
  const run = slots.use(() => pool.run(task, { signal: deadline.signal }) as Promise<SearchTaskResult>);
  return run.catch((error: unknown) => {
    if ((error as Error | null)?.name === "AbortError") throw new SearchDeadlineError(deadline.ms);
    throw error;
  });
}

/** A chain task as it is posted, with the buffers it moves to the worker. */
function chainTaskMove(task: ChainTask, indexRoom: ArrayBuffer | undefined): { task: ChainTask; transferList: ArrayBuffer[] } {
  const transferList = task.input.kind === "encoded" ? task.input.chunks.map((chunk) => chunk.buffer as ArrayBuffer) : [];
  if (!indexRoom) return { task, transferList };
  transferList.push(indexRoom);
  return { task: { ...task, indexRoom }, transferList };
}

/** Bytes a chain task carries or reads (messages sent as objects count by their number). */
function chainTaskBytes(task: ChainTask): number {
  const { input } = task;
  switch (input.kind) {
    case "file-slice":
      return sliceBytes(input.slice);
    case "encoded":
      return input.chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    case "messages":
      return input.messages.length * 10_000;
    case "json":
      return input.texts.reduce((sum, text) => sum + text.length, 0);
  }
}

/** An aborted task says what ran out of time, not just "AbortError". */
function deadlineError(what: string): (error: unknown) => never {
  return (error) => {
    if ((error as Error | null)?.name === "AbortError") throw new Error(`${what}: the worker did not finish before its deadline and was stopped`);
    throw error;
  };
}

const WORKER_BUNDLE = "compress-chain.worker.cjs";

/**
 * The worker as bundled by `npm run build` (scripts/bundle.mjs: one file a thread loads at once).
 * This module runs from dist/src/main/, from a bundle's chunk in dist/src/bin/ (the same depth),
 * or under vitest from src/main/, whose worker is still the built one.
 */
export function workerFile(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith(".js") || here.endsWith(".cjs")) return path.join(path.dirname(here), "..", "bin", WORKER_BUNDLE);
  const root = path.resolve(path.dirname(here), "..", "..");
  return path.join(root, "dist", "src", "bin", WORKER_BUNDLE);
}
