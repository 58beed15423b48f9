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

export interface ChainRunner {
  /** Worker threads in the pool; 0 = inline on the calling thread. */
  readonly workers: number;
  run(task: ChainTask): Promise<ChainTaskResult>;
  /** Reads and parses one shard of a session file (main/scan-session.ts). */
  scan(task: ShardTask): Promise<ShardScan>;
  close(): Promise<void>;
}

export function createChainRunner(workers: number): ChainRunner {
  return workers <= 0 ? inlineRunner() : poolRunner(workers);
}

function inlineRunner(): ChainRunner {
  return {
    workers: 0,
    // An "exit" fault would end the whole process inline; inline it is reported as a throw.
    run: (task) => runChainTask(task.fault === "exit" ? { ...task, fault: "throw" } : task),
    scan: async (task) => scanShard(task),
    close: async () => undefined,
  };
}

function poolRunner(workers: number): ChainRunner {
  const pool = new Piscina({ filename: workerFile(), minThreads: workers, maxThreads: workers, idleTimeout: 5_000 });
  return {
    workers,
    run: (task) => pool.run(task, task.encodedSlice ? { transferList: [task.encodedSlice.buffer as ArrayBuffer] } : {}) as Promise<ChainTaskResult>,
    scan: (task) => pool.run(task) as Promise<ShardScan>,
    close: () => pool.destroy(),
  };
}

/** The compiled worker; under vitest this module runs from src/, so point at dist/ (built by `npm test`). */
export function workerFile(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith(".js")) return path.join(path.dirname(here), "..", "workers", "compress-chain.worker.js");
  const root = path.resolve(path.dirname(here), "..", "..");
  return path.join(root, "dist", "src", "workers", "compress-chain.worker.js");
}
