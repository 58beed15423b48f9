/**
 * xxHash64 digests (xxhash-wasm) for spill files: fast enough to hash megabyte outputs on every
 * spill and every query. The WASM module loads once per thread.
 */

import xxhash from "xxhash-wasm";

export interface Hasher {
  /** 16 lowercase hex chars of the xxh64 of the string's UTF-8 bytes. */
  hex64(text: string): string;
  /** 16 lowercase hex chars of the xxh64 of raw bytes. */
  hex64Bytes(bytes: Uint8Array): string;
}

const DIGEST_PREFIX = "xxh64:";

/** The loaded module, once asked for: one per thread, like any import. */
let loading: Promise<Hasher> | undefined;

export function loadHasher(): Promise<Hasher> {
  loading ??= whileLoopAlive(xxhash()).then((api) => ({
    hex64: (text: string) => api.h64ToString(text),
    hex64Bytes: (bytes: Uint8Array) => api.h64Raw(bytes).toString(16).padStart(16, "0"),
  }));
  return loading;
}

/**
 * `promise`, with this thread's event loop held alive until it settles. WebAssembly compiles on
 * V8's background threads and reports back with a task, not a libuv handle: a thread with nothing
 * else pending leaves its loop, and Node 20 then blocks in NodePlatform::DrainTasks until the
 * background work is done, which never happens if that work waits for a garbage collection on
 * the blocked thread (a known Node deadlock, nodejs/node#54918). Seen once: a CLI run stuck at
 * startup, on 0 s of CPU, its optimising-compiler thread waiting for a collection.
 */
function whileLoopAlive<T>(promise: Promise<T>): Promise<T> {
  const hold = setInterval(() => undefined, 60_000);
  return promise.finally(() => clearInterval(hold));
}

/** The `spillDigest` value recorded for a spilled output's exact bytes. */
export function spillDigestOf(hasher: Hasher, bytes: Uint8Array): string {
  return `${DIGEST_PREFIX}${hasher.hex64Bytes(bytes)}`;
}

/** True when `bytes` are exactly what `digest` was computed over. */
export function digestMatches(hasher: Hasher, digest: string, bytes: Uint8Array): boolean {
  return digest === spillDigestOf(hasher, bytes);
}
