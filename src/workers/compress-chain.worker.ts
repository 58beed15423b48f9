/**
 * piscina worker entry: one default export taking either a ChainTask or a ShardTask. (Named
 * handlers would load this module a second time, and Node 20 can fail a require() racing an
 * import() of the same ES module: one entry point, one load.) Kept apart from the pool so the pool
 * never imports worker internals.
 */

import type { ChainTask, ChainTaskResult } from "./chain-task.js";
import { runChainTask } from "./run-chain-task.js";
import { scanShardInto } from "./scan-shard.js";
import type { ShardTask } from "./scan-task.js";
import { move, transferableSymbol, valueSymbol } from "piscina";
import { ShardPacker, wireTransferList, type ShardScanWire } from "./shard-codec.js";
import { lowerThisThreadsPriority } from "../io/thread-priority.js";

// Once per thread, when piscina loads this module into it.
lowerThisThreadsPriority();

export default async function runWorkerTask(task: ChainTask | ShardTask): Promise<ChainTaskResult | ShardScanWire> {
  if (!("kind" in task) || task.kind !== "scan-shard") return runChainTask(task as ChainTask);
  const packer = new ShardPacker();
  const wire = packer.finish(await scanShardInto(task, (line) => packer.add(line)));
  // Moved, not copied (workers/shard-codec.ts): piscina posts the value with these buffers in its transfer list.
  return move({ [transferableSymbol]: wireTransferList(wire), [valueSymbol]: wire }) as unknown as ShardScanWire;
}
