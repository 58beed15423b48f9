/**
 * One piece of compression work at a time. Live flushes and `/pruner compact` share the pruning
 * state and pi's session leaf, so they must never interleave. Flush requests that arrive while
 * one is waiting to start are merged into it: every flush looks at the whole branch, so the
 * newest request covers the older ones.
 */

type Task = () => Promise<void>;

export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();
  private waiting: { task: Task; done: Promise<void> } | null = null;

  /** Run `task` after everything queued before it; its result or error goes to the caller only. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.then(ignore, ignore);
    return result;
  }

  /** Queue `task`, or replace the task of a request that has not started yet. */
  coalesce(task: Task): Promise<void> {
    if (this.waiting) {
      this.waiting.task = task;
      return this.waiting.done;
    }
    const slot = { task, done: Promise.resolve() };
    slot.done = this.run(() => {
      this.waiting = null;
      return slot.task();
    });
    this.waiting = slot;
    return slot.done;
  }

  /** Resolves once everything queued so far has finished (successfully or not). */
  idle(): Promise<void> {
    return this.tail;
  }
}

function ignore(): void {}
