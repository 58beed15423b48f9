/**
 * Brings parsed version-1/2 session entries to version 3, the way pi does when it loads a
 * file, so that a file we rewrite is what pi itself would have written.
 * Pure: mutates the objects it is given (as pi does) and does no I/O.
 * Unlike pi, entry ids come from the caller (`idFor`), so migrating twice gives the same ids.
 */
import { createHash } from "node:crypto";
import { CURRENT_SESSION_VERSION, type SessionHeader } from "./session-types.js";

/** A parsed line before migration: v1 entries lack `id`/`parentId`. */
export interface RawEntry {
  type: string;
  [key: string]: unknown;
}

/**
 * Returns the id for the entry at `lineIndex`, its position in the list of all parsed lines
 * where the header is 0 and the first entry is 1 (the index space of v1 `firstKeptEntryIndex`).
 */
export type IdFor = (lineIndex: number) => string;

/** The session version a header declares; pi reads a missing version as 1. */
export function sessionVersionOf(header: SessionHeader): number {
  return typeof header.version === "number" ? header.version : 1;
}

/**
 * Migrates in place; afterwards every entry (except stray `session` lines) has `id` and
 * `parentId`. Keys are added by assignment so JSON key order matches pi's output.
 * Returns true when the header's version was below 3 (pi rewrites the file in that case).
 */
export function migrateEntries(header: SessionHeader, entries: RawEntry[], idFor: IdFor): boolean {
  const version = sessionVersionOf(header);
  if (version >= CURRENT_SESSION_VERSION) return false;
  if (version < 2) migrateV1ToV2(header, entries, idFor);
  migrateV2ToV3(header, entries);
  return true;
}

/** v1 → v2: a linear id/parentId chain, compaction indexes become ids. */
function migrateV1ToV2(header: SessionHeader, entries: RawEntry[], idFor: IdFor): void {
  header.version = 2;
  let previousId: string | null = null;
  entries.forEach((entry, i) => {
    // pi treats any `session` line as a header: it gets a version, not an id.
    if (entry.type === "session") {
      entry.version = 2;
      return;
    }
    entry.id = idFor(i + 1);
    entry.parentId = previousId;
    previousId = entry.id as string;
    if (entry.type === "compaction") convertFirstKeptIndex(entry, header, entries);
  });
}

/**
 * `firstKeptEntryIndex` indexes the list of all lines, header included. pi reads the target's
 * id at this point of the pass, so a target later in the file has no id yet and is dropped.
 */
function convertFirstKeptIndex(entry: RawEntry, header: SessionHeader, entries: RawEntry[]): void {
  const index = entry.firstKeptEntryIndex;
  if (typeof index !== "number") return;
  const target = index === 0 ? header : entries[index - 1];
  if (target !== undefined && target.type !== "session" && typeof target.id === "string") {
    entry.firstKeptEntryId = target.id;
  }
  delete entry.firstKeptEntryIndex;
}

/** v2 → v3: the `hookMessage` role was renamed `custom`. */
function migrateV2ToV3(header: SessionHeader, entries: RawEntry[]): void {
  header.version = CURRENT_SESSION_VERSION;
  for (const entry of entries) {
    if (entry.type === "session") {
      entry.version = CURRENT_SESSION_VERSION;
      continue;
    }
    const message = entry.type === "message" ? entry.message : undefined;
    if (isRecord(message) && message.role === "hookMessage") message.role = "custom";
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/**
 * Deterministic 8-hex ids: sha1(sessionId + ":" + lineIndex), re-hashed with a counter when
 * the id is already taken (by an earlier call or by `reserved`).
 */
export function deterministicIdFactory(sessionId: string, reserved: Iterable<string> = []): IdFor {
  const used = new Set(reserved);
  return (lineIndex) => {
    for (let attempt = 0; ; attempt++) {
      const seed = attempt === 0 ? `${sessionId}:${lineIndex}` : `${sessionId}:${lineIndex}:${attempt}`;
      const id = createHash("sha1").update(seed).digest("hex").slice(0, 8);
      if (!used.has(id)) {
        used.add(id);
        return id;
      }
    }
  };
}

/**
 * Migrates one freshly parsed line of a version-1/2 file the way `migrateEntries` migrated its
 * twin: the same entry, parsed and migrated earlier (lightened, say), whose ids and converted
 * fields are copied over in the order migrateEntries assigns them, so the keys land where they
 * would have. A streamed rewrite needs no other entry in memory.
 */
export function migrateLikeTwin(entry: RawEntry, twin: RawEntry, fromVersion: number): void {
  if (fromVersion >= CURRENT_SESSION_VERSION) return;
  if (entry.type === "session") {
    entry.version = CURRENT_SESSION_VERSION;
    return;
  }
  if (fromVersion < 2) {
    entry.id = twin.id;
    entry.parentId = twin.parentId;
    if (entry.type === "compaction" && typeof entry.firstKeptEntryIndex === "number") {
      if (Object.hasOwn(twin, "firstKeptEntryId")) entry.firstKeptEntryId = twin.firstKeptEntryId;
      delete entry.firstKeptEntryIndex;
    }
  }
  const message = entry.type === "message" ? entry.message : undefined;
  if (isRecord(message) && message.role === "hookMessage") message.role = "custom";
}

/** The header of a version-1/2 file as migrateEntries leaves it. */
export function migrateHeader(header: SessionHeader): void {
  if (sessionVersionOf(header) < CURRENT_SESSION_VERSION) header.version = CURRENT_SESSION_VERSION;
}
