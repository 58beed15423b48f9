/**
 * One piece of compression work at a time. Live flushes and `/pruner compact` share the pruning
 * state and pi's session leaf, so they must never interleave. Flush requests that arrive while
 * one is waiting to start are merged into it: every flush looks at the whole branch, so the
 * newest request covers the older ones. Each task carries a label, so a command that cannot get
 * its turn can say what it is waiting for (`tryRun`) instead of hanging behind it.
 */

type Task = () => Promise<void>;

/** What the queue is running now. */
export interface Busy {
  label: string;
  since: number;
}

export type TryRunResult<T> = { ran: true; value: T } | { ran: false; busy: Busy | undefined };

const GAVE_UP = Symbol("gave up");

export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();
  private waiting: { task: Task; done: Promise<void> } | null = null;
  private current: Busy | undefined;

  /** Run `task` after everything queued before it; its result or error goes to the caller only. */
  run<T>(task: () => Promise<T>, label = "a pruner task"): Promise<T> {
    const result = this.tail.then(async () => {
      const busy: Busy = { label, since: Date.now() };
      this.current = busy;
      try {
        return await task();
      } finally {
        if (this.current === busy) this.current = undefined;
      }
    });
    this.tail = result.then(ignore, ignore);
    return result;
  }

  /**
   * `run`, unless the task cannot start within `waitMs`: then it is dropped (it will never run)
   * and the caller learns what holds the queue.
   */
  tryRun<T>(task: () => Promise<T>, label: string, waitMs: number): Promise<TryRunResult<T>> {
    let phase: "waiting" | "started" | "dropped" = "waiting";
    const result = this.run(async (): Promise<T | typeof GAVE_UP> => {
      if (phase === "dropped") return GAVE_UP;
      phase = "started";
      return task();
    }, label);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (phase !== "waiting") return;
        phase = "dropped";
        resolve({ ran: false, busy: this.current });
      }, waitMs);
      result.then(
        (value) => {
          clearTimeout(timer);
          if (value !== GAVE_UP) resolve({ ran: true, value: value as T });
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  /** Queue `task`, or replace the task of a request that has not started yet. */
  coalesce(task: Task, label?: string): Promise<void> {
    if (this.waiting) {
      this.waiting.task = task;
      return this.waiting.done;
    }
    const slot = { task, done: Promise.resolve() };
    slot.done = this.run(() => {
      this.waiting = null;
      return slot.task();
    }, label);
    this.waiting = slot;
    return slot.done;
  }

  /** What runs now, if anything. */
  busy(): Busy | undefined {
    return this.current;
  }

  /** Resolves once everything queued so far has finished (successfully or not). */
  idle(): Promise<void> {
    return this.tail;
  }
}

function ignore(): void {}
