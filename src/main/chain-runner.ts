/**
 * Runs ChainTasks and shard scans on a pool of worker threads (main/worker-pool.ts), or inline
 * on the calling thread when `workers` is 0.
 */

import { startPool } from "./worker-pool.js";
import type { ChainRunner, RunnerOptions } from "./runner-contract.js";
import { Slots } from "./task-slots.js";
import { ThreadScratch } from "../workers/thread-scratch.js";

export { taskDeadlineMs, type ChainRunner, type RunnerOptions, type TaskStart } from "./runner-contract.js";

export function createChainRunner(workers: number, options: RunnerOptions = {}): ChainRunner {
  return workers <= 0 ? inlineRunner() : startPool(workers, options);
}

/**
 * The worker modules, loaded by the first inline task: a run with a pool never needs them in the
 * calling thread (the pool's threads load their own).
 */
function workerModules() {
  return (loadedWorkerModules ??= Promise.all([import("../workers/run-chain-task.js"), import("../workers/scan-shard.js")]));
}

let loadedWorkerModules: Promise<[typeof import("../workers/run-chain-task.js"), typeof import("../workers/scan-shard.js")]> | undefined;

function inlineRunner(): ChainRunner {
  // One task at a time, as one worker would: the next chains' spans must not all be in memory at
  // once. A task's spill files are settled after it (main/settle-spills.ts), while the next one runs.
  const slots = new Slots(1);
  // The calling thread's scratch for this runner's tasks, as a pool thread has its own.
  let scratch: ThreadScratch | undefined;
  // Searches still run off the calling thread: on a one-thread pool, started on the first.
  let searchPool: ChainRunner | undefined;
  return {
    workers: 0,
    // An "exit" or "hang" fault would end or stop the whole process inline: inline it is a throw.
    run: (task, onStart) =>
      slots.use(async () => {
        const [{ runChainTask }] = await workerModules();
        return runChainTask({ ...task, ...onStart?.(), ...(task.fault === "exit" || task.fault === "hang" ? { fault: "throw" as const } : {}) }, (scratch ??= new ThreadScratch()).spanBuffers);
      }),
    scan: (task) =>
      slots.use(async () => {
        const [, { scanShard }] = await workerModules();
        return scanShard(task, (scratch ??= new ThreadScratch()).ranges);
      }),
    search: (task, deadline) => (searchPool ??= startPool(1)).search(task, deadline),
    close: async () => {
      await searchPool?.close();
      searchPool = undefined;
    },
  };
}
