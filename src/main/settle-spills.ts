/**
 * A chain task writes its spill files but does not wait for the disk (io/write-spill.ts): they
 * are made durable here, on the thread that commits, with its asynchronous I/O, before the result
 * is handed on, while the task's thread goes on to its next chain. A worker that waited for its
 * fsyncs would leave its core idle through much of the chains' phase.
 */

import { performance } from "node:perf_hooks";
import { settleSpillFiles } from "../io/write-spill.js";
import type { ChainTask, ChainTaskResult } from "../workers/chain-task.js";
import type { ChainRunner, TaskStart } from "./runner-contract.js";
import { Slots } from "./task-slots.js";

/**
 * Chains settled at once, in the order their tasks end: a settle keeps up to a batch of files open
 * (io/write-spill.ts, 64), and every chain in flight at once could run out of the process's
 * descriptors (~1024). libuv runs four file operations at a time anyway. Process-wide, as the
 * descriptors and libuv's threads are.
 */
const settling = new Slots(4);

/** Runs the task; its result comes once its spill files are durable under their final names, and a failure to make them so fails it. */
export async function runAndSettleSpills(runner: ChainRunner, task: ChainTask, onStart?: () => TaskStart): Promise<ChainTaskResult> {
  const result = await runner.run(task, onStart);
  if (result.staged.length === 0) return result;
  const started = performance.now();
  await settling.use(() => settleSpillFiles(task.spill, result.staged));
  result.timings.spill += performance.now() - started;
  return result;
}
