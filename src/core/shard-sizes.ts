/**
 * How big each shard of the parallel scan is. Workers take shards in file order as they come free,
 * so with shards of one size the scan ends when the worker that took the last one is done, the
 * others idle meanwhile, and the main thread then decodes that whole shard alone. Over the last
 * stretch of the file the shards shrink, so the workers finish close together and the last decode
 * is short (guided self-scheduling). Pure: the cuts themselves are io/shard-bounds.ts's.
 */

/** Bytes per shard: a worker holds a shard's parsed lines until it returns them, and small shards keep those out of the old generation. */
export const SHARD_BYTES = 2 * 1024 * 1024;

/** The smallest shard the tail shrinks to: below this a task's fixed cost (dispatch, a buffer, a reply) starts to show. */
export const MIN_SHARD_BYTES = 256 * 1024;

/**
 * Shards in flight per worker over the tail: a shard is sized to 1/(workers × this) of what is left,
 * so the last round of shards takes about a shard's time over the number of workers.
 */
const TAIL_SHARDS_PER_WORKER = 2;

/** The size of the shard that starts at a byte offset. */
export type ShardSizer = (start: number) => number;

/**
 * Shards of `maxBytes` while much of the file is left, then a share of what is left, never under
 * MIN_SHARD_BYTES (nor over `maxBytes`). Inline (no workers), where the shards are scanned one
 * after the other on the main thread, every shard is `maxBytes`.
 */
export function guidedShardSizes(fileBytes: number, workers: number, maxBytes = SHARD_BYTES): ShardSizer {
  if (workers < 1) return () => maxBytes;
  const floor = Math.min(MIN_SHARD_BYTES, maxBytes);
  return (start) => Math.min(maxBytes, Math.max(floor, Math.ceil((fileBytes - start) / (workers * TAIL_SHARDS_PER_WORKER))));
}
