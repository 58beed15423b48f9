/**
 * The deterministic chain body (reference §4.7), byte-exact with upstream: seven lines built from
 * the records and refs alone (no clock), so a compressed chain renders the same on every call.
 */

import type { ToolCallRecord } from "./prune-types.js";
import { jsonText } from "./json-text.js";

/** The fields of a record the body reads; workers and the retry path pass light records. */
export type BodyRecord = Pick<ToolCallRecord, "toolCallId" | "toolName" | "args" | "timestamp" | "resultTimestamp">;

export const DETERMINISTIC_BODY_HEADLINE =
  "Deterministic chain compression (no per-batch summary existed for this span; raw outputs recoverable via context_tree_query).";

/** Args excerpts longer than this many UTF-16 units are cut and marked with "...". */
export const EXCERPT_MAX_UNITS = 200;

/**
 * `excerptOf` reads a record's args for the First/Last lines; a worker whose args still hold
 * undecoded strings (core/literal-refs.ts) passes one that resolves them first.
 */
export function buildDeterministicBody(records: readonly BodyRecord[], refs: readonly string[], excerptOf: (args: unknown) => string = argsExcerpt): string {
  const sorted = [...records].sort((a, b) => recordTime(a) - recordTime(b));
  const first = sorted[0];
  const last = sorted[sorted.length - 1];
  return [
    DETERMINISTIC_BODY_HEADLINE,
    `Calls: ${records.length}`,
    `Tools: ${toolHistogram(records)}`,
    `Span: ${isoOf(first)} -> ${isoOf(last)} (${spanSeconds(first, last)}s)`,
    `First: ${first?.toolName ?? ""} ${excerptOf(first?.args)}`,
    `Last: ${last?.toolName ?? ""} ${excerptOf(last?.args)}`,
    `Refs: ${(refs.length > 0 ? refs : records.map((r) => r.toolCallId)).join(", ")}`,
  ].join("\n");
}

/** The time a record is sorted and printed by: its result timestamp, else its capture time. */
export function recordTime(record: BodyRecord): number {
  return record.resultTimestamp ?? record.timestamp;
}

/** `name xN` by count descending, ties by localeCompare (upstream's ICU order, not code points). */
export function toolHistogram(records: readonly BodyRecord[]): string {
  const counts = new Map<string, number>();
  for (const record of records) counts.set(record.toolName, (counts.get(record.toolName) ?? 0) + 1);
  return [...counts]
    .sort(([nameA, countA], [nameB, countB]) => countB - countA || compareToolNames(nameA, nameB))
    .map(([name, count]) => `${name} x${count}`)
    .join(", ");
}

/** Names of lowercase ASCII letters and digits, which ICU's root collation orders as their code points do. */
const PLAIN_NAME = /^[a-z0-9]*$/;

/**
 * `a.localeCompare(b)`'s order. A thread's first localeCompare loads ICU's collator, which every
 * worker would pay on its first chain: names that ICU orders by code point (bash, read, edit,
 * todowrite) are compared so, and only other names reach ICU.
 */
export function compareToolNames(a: string, b: string): number {
  if (PLAIN_NAME.test(a) && PLAIN_NAME.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  return a.localeCompare(b);
}

function isoOf(record: BodyRecord | undefined): string {
  return record ? new Date(recordTime(record)).toISOString() : "";
}

function spanSeconds(first: BodyRecord | undefined, last: BodyRecord | undefined): number {
  if (!first || !last) return 0;
  return Math.round((recordTime(last) - recordTime(first)) / 1000);
}

/** Compact JSON of the args, cut at 200 UTF-16 units plus "..."; undefined args give "". */
export function argsExcerpt(args: unknown): string {
  const json = args === undefined ? undefined : jsonText(args);
  if (json === undefined) return "";
  return json.length <= EXCERPT_MAX_UNITS ? json : `${json.slice(0, EXCERPT_MAX_UNITS)}...`;
}
