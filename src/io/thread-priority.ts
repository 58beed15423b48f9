/**
 * Scheduling priorities of this process's threads. The main thread is the critical path of a
 * compaction (it dispatches, commits in order, and inside pi it is pi's UI). With as many busy
 * threads as cores it otherwise waits on the run queue about as long as it runs, and that wait
 * was most of every event-loop stall. Lowering the others' priority costs them nothing when a
 * core is free.
 *
 * Linux only: there a nice value belongs to a thread, and a new thread inherits its creator's.
 * Elsewhere `setpriority` changes the whole process, main thread included, the opposite of the
 * point, so these do nothing. (piscina's own `niceIncrement` calls nice(2) through an optional
 * native package, and would lower the whole process where nice values are per process.)
 */

import fs from "node:fs";
import os from "node:os";

/**
 * Nice steps a lowered thread sits below the main thread. The lowest priority is worse: V8's GC
 * helpers, lowered too, starved while the main thread waited for them in a collection.
 */
export const LOWERED_NICE_STEPS = 10;

/** The weakest priority a nice value can give. */
const WEAKEST_NICE = 19;

/** Lowers the calling thread's priority (a worker thread calls it once, when it starts). */
export function lowerThisThreadsPriority(): number | undefined {
  if (process.platform !== "linux") return undefined;
  const base = niceOfThisThread();
  return base === undefined ? undefined : lowerThread(0, base);
}

/**
 * Lowers the priority of every thread of this process but the main one, as they are now: V8's
 * platform threads, which compile and collect for every isolate, worker threads' included. Only
 * for a process chainpress owns (its executable): a host's threads are the host's.
 */
export function lowerOtherThreadsPriority(): number {
  const base = process.platform === "linux" ? niceOfThisThread() : undefined;
  if (base === undefined) return 0;
  let lowered = 0;
  for (const name of threadIds()) {
    const tid = Number(name);
    if (tid !== process.pid && lowerThread(tid, base) !== undefined) lowered++;
  }
  return lowered;
}

/** The calling thread's nice value, or undefined when the system will not say. */
function niceOfThisThread(): number | undefined {
  try {
    return os.getPriority();
  } catch {
    // Unknown base: nothing is lowered (a hint, as below), rather than a worker that fails to load.
    return undefined;
  }
}

/** This process's thread ids; none when /proc is not mounted (some containers). */
function threadIds(): string[] {
  try {
    return fs.readdirSync("/proc/self/task");
  } catch {
    // No /proc: the threads keep their priority; a scheduling hint is never worth failing a run.
    return [];
  }
}

function lowerThread(tid: number, base: number): number | undefined {
  const target = Math.min(WEAKEST_NICE, base + LOWERED_NICE_STEPS);
  try {
    os.setPriority(tid, target);
  } catch {
    // A priority is a scheduling hint: a thread that ended meanwhile, or a sandbox that forbids
    // the call, costs the main thread some latency, never correctness.
    return undefined;
  }
  return target;
}
