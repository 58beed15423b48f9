/**
 * piscina worker entry. The default export runs one ChainTask; `scanShard` (called by name) parses
 * one shard of a session file. Kept apart from the pool so the pool never imports worker internals.
 */

import { runChainTask } from "./run-chain-task.js";

export { scanShard } from "./scan-shard.js";
export default runChainTask;
