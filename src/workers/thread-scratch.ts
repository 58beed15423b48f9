/**
 * What one thread reuses from task to task, so that the megabytes its tasks read are the same
 * megabytes each time: the buffer a shard is read into, and the buffers a chain task reads its
 * span into. A pool thread has one (workers/compress-chain.worker.ts) and so has an inline runner
 * (main/chain-runner.ts); a task uses its thread's while it runs and keeps nothing of it.
 */

import { BufferPool } from "../io/buffer-pool.js";
import { RangeReader } from "../io/read-range.js";

/** Span buffers kept for reuse: several, because an inline run overlaps its tasks. */
const SPAN_BUFFERS_KEPT = 2;
/** Span buffers larger than this are not kept (a span that big gets one of its own each time). */
const SPAN_BUFFER_MAX_BYTES = 32 * 1024 * 1024;

export class ThreadScratch {
  /** What a shard is read into (workers/scan-shard.ts). */
  readonly ranges = new RangeReader();
  /** What a chain task's span is read into (workers/run-chain-task.ts). */
  readonly spanBuffers = new BufferPool(SPAN_BUFFERS_KEPT, SPAN_BUFFER_MAX_BYTES);
}
