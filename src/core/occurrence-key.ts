/**
 * Occurrence keys: `<toolCallId>@<resultTimestamp>` names one tool output even when a provider
 * reuses a tool-call id. Without a timestamp the key is the bare id (legacy records).
 */

const DIGITS = /^\d+$/;

/**
 * Join an id and a result timestamp; no timestamp gives the bare id. Joined by Array#join, which
 * writes one flat string: a template literal makes a rope of three strings that a Map then
 * flattens into a fourth, for each of the many keys a large session keeps twice. Both write a
 * number as String() does.
 */
export function occurrenceKey(toolCallId: string, resultTimestamp?: number): string {
  return resultTimestamp === undefined ? toolCallId : [toolCallId, "@", resultTimestamp].join("");
}

/**
 * `key === occurrenceKey(toolCallId, resultTimestamp)`, without building the key, nor (for a
 * timestamp that is a whole number of milliseconds) the timestamp's digits: V8 keeps each number
 * it writes as a string in a cache that outlives a young collection, so a pass over a large
 * session's keys would promote them all to die in the old generation.
 */
export function isOccurrenceKeyOf(key: string, toolCallId: string, resultTimestamp?: number): boolean {
  if (resultTimestamp === undefined) return key === toolCallId;
  const at = toolCallId.length;
  if (key.length < at + 2 || key.charCodeAt(at) !== 0x40 || !key.startsWith(toolCallId)) return false;
  if (Number.isSafeInteger(resultTimestamp) && resultTimestamp >= 0) return hasDigitsOf(key, at + 1, resultTimestamp);
  const time = String(resultTimestamp);
  return key.length === at + 1 + time.length && key.endsWith(time);
}

/** True when `key` from `from` on is String(value) for a safe, non-negative integer: its digits, no leading zero. */
function hasDigitsOf(key: string, from: number, value: number): boolean {
  if (key.length - from > 1 && key.charCodeAt(from) === 0x30) return false;
  // Exact below 2^53; digits worth more round to at least 2^53, which no safe value equals.
  let parsed = 0;
  for (let i = from; i < key.length; i++) {
    const digit = key.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return false;
    parsed = parsed * 10 + digit;
  }
  return parsed === value;
}

export interface ParsedOccurrenceKey {
  toolCallId: string;
  resultTimestamp?: number;
}

/** Split at the last `@` when what follows is all digits and the `@` is not the first character. */
export function parseOccurrenceKey(key: string): ParsedOccurrenceKey {
  const at = key.lastIndexOf("@");
  if (at <= 0) return { toolCallId: key };
  const suffix = key.slice(at + 1);
  if (!DIGITS.test(suffix)) return { toolCallId: key };
  return { toolCallId: key.slice(0, at), resultTimestamp: Number(suffix) };
}

/** The bare tool-call id of a key or id. */
export function bareToolCallId(keyOrId: string): string {
  // Most are bare ids already (a chain entry's droppedToolCallIds): no parse, no object.
  return keyOrId.lastIndexOf("@") <= 0 ? keyOrId : parseOccurrenceKey(keyOrId).toolCallId;
}

/** A result timestamp is any JS number (NaN included, as upstream); anything else is absent. */
export function resultTimestampOf(value: unknown): number | undefined {
  return typeof value === "number" ? value : undefined;
}
