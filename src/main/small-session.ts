/**
 * Where work stops being small enough for the calling thread (bench/RESULTS.md, "Small units").
 *
 * A session under SMALL_SESSION_BYTES is compacted on the calling thread and read whole: a pool's
 * start, the parallel scan and lightening cost it more than they save. A larger one keeps the
 * pool and the scan, whose main thread holds memory in proportion to the entries, not to the
 * outputs.
 */
export const SMALL_SESSION_BYTES = 16 * 1024 * 1024;

export function isSmallSession(bytes: number): boolean {
  return bytes < SMALL_SESSION_BYTES;
}

/**
 * With a pool, a chain whose lines are fewer bytes than this runs on the calling thread: handing
 * it to a worker (posting the task, its deadline, the reply) costs the calling thread about as
 * much as running it, and a session of thousands of such chains kept the pool's threads and the
 * calling thread waiting on each other.
 */
export const SMALL_CHAIN_BYTES = 64 * 1024;
