/**
 * piscina worker entry: one default export taking a ChainTask, a ShardTask or a SearchTask (named
 * handlers would load this module a second time: one entry point, one load). Bundled as CommonJS
 * (scripts/bundle.mjs), which piscina's require() loads natively. Kept apart from the pool so the
 * pool never imports worker internals.
 */

import { parentPort, threadId } from "node:worker_threads";
import { move, Piscina, transferableSymbol, valueSymbol } from "piscina";
import { lowerThisThreadsPriority } from "../io/thread-priority.js";
import type { ChainTask, ChainTaskResult } from "./chain-task.js";
import { runChainTask } from "./run-chain-task.js";
import { scanShardInto } from "./scan-shard.js";
import type { ShardTask } from "./scan-task.js";
import { isSearchTask, runSearchTask, type SearchTask, type SearchTaskResult } from "./search-task.js";
import { ShardPacker, wireTransferList, type ShardScanWire } from "./shard-codec.js";
import { ThreadScratch } from "./thread-scratch.js";
import { workerLoaded } from "./worker-loaded.js";

// Once per thread, when piscina loads this module into it.
lowerThisThreadsPriority();

/**
 * This thread's scratch, for every task it runs. piscina loads this module once per thread and
 * gives it no other place to keep anything from task to task.
 */
const scratch = new ThreadScratch();

export default async function runWorkerTask(task: ChainTask | ShardTask | SearchTask): Promise<ChainTaskResult | ShardScanWire | SearchTaskResult> {
  if (isSearchTask(task)) return runSearchTask(task);
  if (!("kind" in task) || task.kind !== "scan-shard") {
    const result = await runChainTask(task as ChainTask, scratch.spanBuffers);
    // The index entry's bytes (about a megabyte per 1M-character chain) are the task's own buffer
    // (core/utf8-join.ts): moved, the main thread neither copies them nor holds a second copy.
    return moved(result, [result.indexDataJson.buffer as ArrayBuffer]);
  }
  // The text is about a third of the shard's bytes on the bench's sessions (lightened entries).
  const packer = new ShardPacker((task.end - task.start) / 2);
  const wire = packer.finish(await scanShardInto(task, (line) => packer.add(line), scratch.ranges));
  // Moved, not copied (workers/shard-codec.ts).
  return moved(wire, wireTransferList(wire));
}

/** `value` as piscina posts it with `buffers` in the transfer list. */
function moved<T extends object>(value: T, buffers: ArrayBuffer[]): T {
  return move({ [transferableSymbol]: buffers, [valueSymbol]: value }) as unknown as T;
}

// Said once piscina's require() of this module has returned: not in the module's body, which runs
// inside that require(), and not in a later macrotask, which an idle piscina thread (blocked in
// Atomics.wait) would never reach. From then on the pool may terminate this thread
// (main/pool-boot.ts). Not in the inline runner (the calling thread), nor in a thread piscina does
// not own.
if (Piscina.isWorkerThread) queueMicrotask(() => parentPort?.postMessage(workerLoaded(threadId)));
