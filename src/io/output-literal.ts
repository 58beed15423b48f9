/**
 * A located output: where a tool result's text lies in its line, when it is one JSON string
 * literal (the content itself, or its only text part), as the shard scan found it
 * (core/json-literal.ts). The one definition of its fields and their order. It takes four forms,
 * each built and read by the positions this module exports: the tuple the scan makes and the main
 * thread's builder passes on (OutputLiteral), the shard codec's chunk (the tuple's items, back to
 * back: workers/shard-codec.ts), the model's typed columns (io/entry-locations.ts) and a file
 * slice's columns (workers/file-slice-columns.ts). Constants only: the bundler writes them in
 * where they are used, so the per-output loops that copy a literal cost what they did.
 */

/**
 * Its fields, in order: the opening quote's offset from the line's start, the literal's length in
 * bytes, the text's UTF-16 units, JSON length and UTF-8 bytes (its *measures*), `flags`
 * (LITERAL_CANONICAL, LITERAL_LONE_SURROGATE) and the xxh64 of its bytes (16 hex digits). Packed
 * flat: the main thread keeps one per tool result.
 */
export type OutputLiteral = [offset: number, bytes: number, units: number, jsonLength: number, utf8Bytes: number, flags: number, digest: string];

/** Where each field lies in an OutputLiteral, and so in every form of it. */
export const LITERAL_OFFSET = 0;
export const LITERAL_BYTES = 1;
export const LITERAL_UNITS = 2;
export const LITERAL_JSON_LENGTH = 3;
export const LITERAL_UTF8_BYTES = 4;
export const LITERAL_FLAGS = 5;
export const LITERAL_DIGEST = 6;
/** The measures are the fields before `flags`; the numbers (measures and flags), those before the digest. */
export const LITERAL_MEASURES = LITERAL_FLAGS;
export const LITERAL_NUMBERS = LITERAL_DIGEST;
/** Items in an OutputLiteral. */
export const LITERAL_WIDTH = 7;

/** `flags`: the literal is canonical JSON; it holds a lone surrogate. */
export const LITERAL_CANONICAL = 1;
export const LITERAL_LONE_SURROGATE = 2;
