/**
 * piscina worker entry: one default export taking either a ChainTask or a ShardTask. (Named
 * handlers would load this module a second time, and Node 20 can fail a require() racing an
 * import() of the same ES module: one entry point, one load.) Kept apart from the pool so the pool
 * never imports worker internals.
 */

import type { ChainTask, ChainTaskResult } from "./chain-task.js";
import { runChainTask } from "./run-chain-task.js";
import { scanShard } from "./scan-shard.js";
import type { ShardTask } from "./scan-task.js";
import { encodeShardScan, type ShardScanWire } from "./shard-codec.js";

export default async function runWorkerTask(task: ChainTask | ShardTask): Promise<ChainTaskResult | ShardScanWire> {
  return "kind" in task && task.kind === "scan-shard" ? encodeShardScan(await scanShard(task)) : runChainTask(task as ChainTask);
}
