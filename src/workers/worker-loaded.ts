/**
 * What a pool thread posts on its parent port once piscina has loaded the worker module into it:
 * main/pool-boot.ts waits for it before terminating the thread.
 */

export interface WorkerLoaded {
  chainpressWorkerLoaded: number;
}

/** The message for the thread `threadId`. */
export function workerLoaded(threadId: number): WorkerLoaded {
  return { chainpressWorkerLoaded: threadId };
}

/** The thread a message says has loaded, or undefined for any other message. */
export function loadedThread(message: unknown): number | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const id = (message as Partial<WorkerLoaded>).chainpressWorkerLoaded;
  return typeof id === "number" ? id : undefined;
}
