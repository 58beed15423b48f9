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

let loading: Promise<Hasher> | undefined;

export function loadHasher(): Promise<Hasher> {
  loading ??= xxhash().then((api) => ({
    hex64: (text: string) => api.h64ToString(text),
    hex64Bytes: (bytes: Uint8Array) => api.h64Raw(bytes).toString(16).padStart(16, "0"),
  }));
  return loading;
}

/** The `spillDigest` value recorded for a spilled output's exact bytes. */
export function spillDigestOf(hasher: Hasher, bytes: Uint8Array): string {
  return `${DIGEST_PREFIX}${hasher.hex64Bytes(bytes)}`;
}

/** True when `bytes` are exactly what `digest` was computed over. */
export function digestMatches(hasher: Hasher, digest: string, bytes: Uint8Array): boolean {
  return digest === spillDigestOf(hasher, bytes);
}
