/**
 * Shape checks for the custom entries reconstruction replays (reference §1.1-§1.4). Each check
 * returns what is wrong, or undefined when the value has the shape every later reader (render,
 * query, planning, stats) relies on. Entries come from files anyone may have edited, and from
 * other writers (pi-condense), so nothing is trusted: an entry that fails is skipped whole rather
 * than half-applied, and costs only itself.
 */

/** A counter suffix (`t<N>`, `b<N>`) beyond this would lose precision and repeat ids. */
const MAX_COUNTER = Number.MAX_SAFE_INTEGER - 1;

/** The widest epoch-ms range a Date (and so an ISO string) can hold. */
const MAX_DATE_MS = 8.64e15;

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/** A JSON number is always finite; the check still keeps NaN/Infinity from in-memory callers out. */
function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** True for an epoch-ms time `new Date(t).toISOString()` can print. */
export function isRepresentableTime(value: unknown): value is number {
  return isFiniteNumber(value) && Math.abs(value) <= MAX_DATE_MS;
}

/** `<prefix><digits>` whose number would overflow the counter it feeds. */
export function counterOverflows(id: string, prefix: string): boolean {
  if (!id.startsWith(prefix)) return false;
  const digits = id.slice(prefix.length);
  return /^\d+$/.test(digits) && Number(digits) > MAX_COUNTER;
}

function fieldProblem(field: string, expected: string): string {
  return `${field} is not ${expected}`;
}

/** `data` of a `context-prune-chain` entry (§1.3): every always-present field, every optional one that is present. */
export function chainEntryProblem(data: unknown): string | undefined {
  if (!isObject(data)) return "data is not an object";
  if (typeof data.blockId !== "string" || data.blockId === "") return fieldProblem("blockId", "a non-empty string");
  if (counterOverflows(data.blockId, "b")) return `blockId ${data.blockId.slice(0, 40)} is out of range`;
  if (!isFiniteNumber(data.startUserTimestamp)) return fieldProblem("startUserTimestamp", "a number");
  if (!isStringArray(data.droppedToolCallIds)) return fieldProblem("droppedToolCallIds", "an array of strings");
  if (data.finalAssistantTimestamp !== null && !isFiniteNumber(data.finalAssistantTimestamp)) return fieldProblem("finalAssistantTimestamp", "a number or null");
  if (!isStringArray(data.toolRefs)) return fieldProblem("toolRefs", "an array of strings");
  if (!isFiniteNumber(data.compressedAt)) return fieldProblem("compressedAt", "a number");
  if ("rangeSummaryText" in data && data.rangeSummaryText !== undefined && typeof data.rangeSummaryText !== "string") return fieldProblem("rangeSummaryText", "a string");
  if ("bodySource" in data && data.bodySource !== undefined && typeof data.bodySource !== "string") return fieldProblem("bodySource", "a string");
  for (const field of ["protectedToolCallIds", "droppedOccurrenceKeys"] as const) {
    if (field in data && data[field] !== undefined && !isStringArray(data[field])) return fieldProblem(field, "an array of strings");
  }
  return undefined;
}

/** Optional record fields and the type each must have when present. */
const RECORD_OPTIONAL: Array<[string, "string" | "number" | "boolean"]> = [
  ["isError", "boolean"],
  ["turnIndex", "number"],
  ["spillBytes", "number"],
  ["resultPreview", "string"],
  ["spillPath", "string"],
  ["contentHash", "string"],
  ["spillDigest", "string"],
];

/**
 * An archived record (§1.1) that can be indexed as is. `resultText` and `resultTimestamp` are
 * not checked here: reconstruction normalises those two (upstream's reader tolerance).
 */
export function recordProblem(raw: unknown): string | undefined {
  if (!isObject(raw)) return "record is not an object";
  if (typeof raw.toolCallId !== "string" || raw.toolCallId === "") return fieldProblem("toolCallId", "a non-empty string");
  if (typeof raw.toolName !== "string") return fieldProblem("toolName", "a string");
  if ("timestamp" in raw && !isFiniteNumber(raw.timestamp)) return fieldProblem("timestamp", "a number");
  for (const [field, type] of RECORD_OPTIONAL) {
    const value = raw[field];
    if (value === undefined) continue;
    if (typeof value !== type || (type === "number" && !Number.isFinite(value))) return fieldProblem(field, `a ${type}`);
  }
  if (typeof raw.spillPath === "string" && raw.spillPath === "") return fieldProblem("spillPath", "a non-empty string");
  if (raw.parts !== undefined) return partsProblem(raw.parts, raw.contentHash);
  return undefined;
}

/** `parts` of a record (core/archived-parts.ts): an array of inline or spilled parts, covered by a content hash. */
function partsProblem(parts: unknown, contentHash: unknown): string | undefined {
  if (!Array.isArray(parts)) return fieldProblem("parts", "an array");
  if (typeof contentHash !== "string") return fieldProblem("contentHash", "a string (the record has parts)");
  for (const [i, part] of parts.entries()) {
    const problem = archivedPartProblem(part);
    if (problem !== undefined) return `parts[${i}]: ${problem}`;
  }
  return undefined;
}

function archivedPartProblem(raw: unknown): string | undefined {
  if (!isObject(raw)) return "not an object";
  if (!Number.isSafeInteger(raw.at) || (raw.at as number) < 0) return fieldProblem("at", "an index");
  if (raw.kind === "inline") return "part" in raw ? undefined : fieldProblem("part", "present");
  if (raw.kind !== "spilled") return fieldProblem("kind", '"inline" or "spilled"');
  if (typeof raw.type !== "string") return fieldProblem("type", "a string");
  if (raw.mimeType !== undefined && typeof raw.mimeType !== "string") return fieldProblem("mimeType", "a string");
  if (raw.dataChars !== undefined && !Number.isSafeInteger(raw.dataChars)) return fieldProblem("dataChars", "an integer");
  if (!Number.isSafeInteger(raw.spillBytes)) return fieldProblem("spillBytes", "an integer");
  if (typeof raw.spillPath !== "string" || raw.spillPath === "") return fieldProblem("spillPath", "a non-empty string");
  if (typeof raw.spillDigest !== "string") return fieldProblem("spillDigest", "a string");
  return undefined;
}

/** A `{shortId, toolCallId}` ref whose short id cannot break the `t<N>` counter. */
export function refProblem(raw: unknown): string | undefined {
  if (!isObject(raw) || typeof raw.shortId !== "string" || typeof raw.toolCallId !== "string") return "ref without a string shortId and toolCallId";
  if (counterOverflows(raw.shortId, "t")) return `ref ${raw.shortId.slice(0, 40)} is out of range`;
  return undefined;
}
