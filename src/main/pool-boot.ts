/**
 * Node 20 aborts the whole process (V8 fatal error "IsGraphAsync must be used on an instantiated
 * module") when a worker thread is terminated while require() instantiates an ES module, which is
 * how piscina loaded the worker module while it was bundled as one. A run that ends early (a
 * refused session, nothing to compress) destroyed the pool while its threads were still loading,
 * and now and then aborted with SIGABRT on a busy machine. So the pool
 * terminates its threads only once each has said that its module is loaded
 * (workers/worker-loaded.ts). The worker is CommonJS now (scripts/bundle.mjs), which require()
 * loads without that step; the wait stays so that an ES module worker cannot bring the abort back,
 * and it costs only a run that ends before its threads have loaded (~0.1 s).
 */

import type { Piscina } from "piscina";
import { loadedThread } from "../workers/worker-loaded.js";

/**
 * How long closing waits for a thread that has not loaded. Loading takes ~0.1 s, a few seconds
 * on a starved machine; a thread that never says so failed to start, and terminating it is safe.
 */
const LOAD_WAIT_MS = 10_000;

/** Watches a pool's threads from its creation: which have loaded the worker module. */
export class PoolBoot {
  private readonly loaded = new Set<number>();
  private wake: (() => void) | undefined;
  private waiting: Promise<void> | undefined;

  constructor(
    private readonly pool: Piscina,
    private readonly waitMs = LOAD_WAIT_MS,
  ) {
    pool.on("message", (message: unknown) => {
      const id = loadedThread(message);
      if (id === undefined) return;
      this.loaded.add(id);
      this.wake?.();
    });
    // A thread that exits leaves pool.threads: what it was waited for may now be true.
    pool.on("workerDestroy", () => this.wake?.());
  }

  /** Resolves once every thread of the pool has loaded (or `waitMs` has passed). */
  settled(): Promise<void> {
    this.waiting ??= this.allLoaded() ? Promise.resolve() : this.wait();
    return this.waiting;
  }

  private wait(): Promise<void> {
    return new Promise<void>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      // Ref'd on purpose: piscina's threads are unref'd, and a process that exited here would
      // terminate them mid-load, the very abort this waits to avoid.
      const timer = setTimeout(finish, this.waitMs);
      this.wake = () => {
        if (this.allLoaded()) finish();
      };
    });
  }

  private allLoaded(): boolean {
    return this.pool.threads.every((thread) => this.loaded.has(thread.threadId));
  }
}
