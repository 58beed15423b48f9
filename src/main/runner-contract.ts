/** What runs ChainTasks and shard scans: a pool of worker threads (main/worker-pool.ts) or the calling thread (main/chain-runner.ts). */

import type { ChainTask, ChainTaskResult } from "../workers/chain-task.js";
import type { ShardScan, ShardTask } from "../workers/scan-task.js";
import type { SearchTask, SearchTaskResult } from "../workers/search-task.js";

export interface ChainRunner {
  /** Worker threads in the pool; 0 = inline on the calling thread. */
  readonly workers: number;
  /**
   * Runs a chain task. `onStart`, when given, is called as the task starts on a worker (not while
   * it waits for one), and what it returns goes with the task. The result's spill files are
   * written but not yet durable (`staged`): the caller settles them (main/settle-spills.ts `runAndSettleSpills`).
   */
  run(task: ChainTask, onStart?: () => TaskStart): Promise<ChainTaskResult>;
  /** Reads and parses one shard of a session file (main/scan-session.ts). */
  scan(task: ShardTask): Promise<ShardScan>;
  /**
   * Searches archived outputs on a worker thread, always: an inline runner starts one for it, on
   * first use. When `deadline` passes, the thread is stopped and the promise rejects with
   * SearchDeadlineError; a task still waiting for a thread then never starts.
   */
  search(task: SearchTask, deadline: SearchDeadline): Promise<SearchTaskResult>;
  close(): Promise<void>;
}

/** What a chain task gets only as it starts: a buffer that should not wait in a queue. */
export interface TaskStart {
  indexRoom?: ArrayBuffer;
}

export interface RunnerOptions {
  /** Deadline of one task in a worker (default: `taskDeadlineMs` of its size). */
  deadlineMs?: (bytes: number) => number;
  /** The module the pool's threads load (default: the built bundle, main/worker-pool.ts `workerFile`). */
  workerFile?: string;
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

/** One deadline for all the tasks of a search: started once, shared by every batch. */
export interface SearchDeadline {
  signal: AbortSignal;
  ms: number;
}

export function searchDeadline(ms: number): SearchDeadline {
  return { signal: AbortSignal.timeout(ms), ms };
}

/** A search's worker ran past its deadline and was stopped (a regular expression that backtracks, say). */
export class SearchDeadlineError extends Error {
  override readonly name = "SearchDeadlineError";
  constructor(readonly deadlineMs: number) {
    super(`the search took longer than ${Math.round(deadlineMs / 1000)} s and was stopped (a regular expression that backtracks without end? make it simpler or use a literal search)`);
  }
}
