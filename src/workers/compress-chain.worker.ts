/**
 * piscina worker entry: one ChainTask in, one ChainTaskResult out. Kept apart from the pool so the
 * pool never imports worker internals.
 */

import { runChainTask } from "./run-chain-task.js";

export default runChainTask;
