/**
 * The compressor's worker pool, created on first use (most pi sessions never need it, and
 * starting threads would slow pi's startup) and closed on `session_shutdown` so idle threads
 * never keep pi's process alive.
 */

import { createChainRunner, type ChainRunner } from "../main/chain-runner.js";

export type RunnerFactory = (workers: number) => ChainRunner;

export class LazyRunner {
  private runner: ChainRunner | null = null;
  private closed = false;

  constructor(
    private readonly workers: () => number,
    private readonly create: RunnerFactory = createChainRunner,
  ) {}

  get(): ChainRunner {
    // After shutdown a late flush must fail rather than start threads nobody will close.
    if (this.closed) throw new Error("the compressor pool is closed (session shut down)");
    this.runner ??= this.create(this.workers());
    return this.runner;
  }

  get started(): boolean {
    return this.runner !== null;
  }

  async close(): Promise<void> {
    this.closed = true;
    const runner = this.runner;
    this.runner = null;
    await runner?.close();
  }
}
