/**
 * Turns classified lines (session-line.ts), fed in file order, into a LoadedSession: the header,
 * the entries, their locations in the file, and the warnings. Every rule about what a line means
 * for the session lives here, whether the lines were parsed on this thread (read-session.ts) or
 * by workers (main/scan-session.ts).
 */
import {
  deterministicIdFactory,
  migrateEntries,
  sessionVersionOf,
  type IdFor,
  type RawEntry,
} from "../core/session-migrate.js";
import { CURRENT_SESSION_VERSION, type SessionEntry, type SessionHeader } from "../core/session-types.js";
import { SessionFileError, sessionWarning, type SessionWarning } from "./session-errors.js";
import { EntryIdSet } from "../core/entry-id-set.js";
import { isObject } from "../core/entry-shapes.js";
import { describeUnknownKind, unknownEntryKindsSteps } from "../core/entry-kinds.js";
import type { LineResult } from "./session-line.js";
import { runSteps, stepDue, type Steps } from "../core/steps.js";
import { EntryLocations } from "./entry-locations.js";
import { RepeatedStrings } from "./repeated-strings.js";
import type { LineMeta, LoadedSession, TruncatedTail } from "./loaded-session.js";
import type { OutputLiteral } from "./output-literal.js";

export interface BuilderOptions {
  /** Leave malformed lines out with a warning (pi's loader) instead of throwing. */
  skipMalformed: boolean;
  /** Ids for entries of version-1 files (default: deterministicIdFactory). */
  idFactory?: (sessionId: string) => IdFor;
  lightened?: boolean;
}

export class SessionBuilder {
  private header: SessionHeader | null = null;
  private readonly entries: RawEntry[] = [];
  /** The location of `entries[i]` is `locations` item i. */
  private readonly locations = new EntryLocations();
  private readonly repeated = new RepeatedStrings();
  private readonly warnings: SessionWarning[] = [];
  private truncatedTail: TruncatedTail | null = null;
  private endsWithoutNewline = false;
  private readonly skippedLines: number[] = [];
  private readonly joinedLines: number[] = [];

  constructor(
    private readonly file: string,
    private readonly options: BuilderOptions,
  ) {}

  /** One line's result; `messageChars[i]` goes with the i-th value of the line, `output` with a single value. */
  accept(meta: LineMeta, result: LineResult, messageChars?: ReadonlyArray<number | undefined>, output?: OutputLiteral): void {
    // Whatever this last line turns out to be, an appender must not glue onto it.
    if (!meta.terminated) this.endsWithoutNewline = true;
    switch (result.kind) {
      case "blank":
        return;
      case "undecodable":
        return this.undecodable(meta, result);
      case "value":
        return this.acceptValue(result.value, meta, messageChars?.[0], output);
      case "joined":
        return this.acceptJoined(meta, result.values, messageChars);
      case "unparsable":
        return this.unparsable(meta, result);
    }
  }

  private undecodable(meta: LineMeta, result: Extract<LineResult, { kind: "undecodable" }>): void {
    if (!meta.terminated && this.header !== null) return this.markTruncated(meta);
    if (result.tooBig) throw new SessionFileError("line-too-long", this.file, result.message, meta.line);
    throw new SessionFileError("invalid-utf8", this.file, result.message, meta.line);
  }

  private unparsable(meta: LineMeta, result: Extract<LineResult, { kind: "unparsable" }>): void {
    if (this.header === null) {
      throw new SessionFileError("not-a-session", this.file, "first line is not JSON (no session header)", meta.line);
    }
    if (!meta.terminated) return this.markTruncated(meta);
    if (!result.syntax) throw new SessionFileError("line-too-long", this.file, result.message, meta.line);
    this.malformed(result.message, meta.line);
  }

  /**
   * pi drops a line it cannot parse, so in a version-3 file the glued entries are not in its
   * tree: appending under one of them would put our entries where pi never looks. They are left
   * out the same way (`--repair` splits the line). An older file is rewritten by the migration,
   * which writes each of them on its own line, so there they are kept.
   */
  private acceptJoined(meta: LineMeta, values: Array<Record<string, unknown>>, messageChars?: ReadonlyArray<number | undefined>): void {
    if (this.header === null) {
      throw new SessionFileError("not-a-session", this.file, "first line is not JSON (no session header)", meta.line);
    }
    const current = sessionVersionOf(this.header) >= CURRENT_SESSION_VERSION;
    // Only a clean glue of entries is a lost newline; anything else on the line is damage.
    if (!values.every((value) => isGluedEntry(value, current))) return this.malformed("line holds several JSON values that are not all session entries", meta.line);
    if (current) {
      this.joinedLines.push(meta.line);
      const what = `line holds ${values.length} entries written without a newline between them; pi ignores the line, and so does chainpress (rerun with --repair to split it)`;
      this.warnings.push(sessionWarning("joined-entries", this.file, what, meta.line));
      return;
    }
    const what = `line holds ${values.length} entries written without a newline between them; all are kept and written on lines of their own by the migration`;
    this.warnings.push(sessionWarning("joined-entries", this.file, what, meta.line));
    values.forEach((value, i) => this.acceptValue(value, meta, messageChars?.[i]));
  }

  private acceptValue(value: unknown, meta: LineMeta, messageChars: number | undefined, output?: OutputLiteral): void {
    if (this.header === null) {
      this.header = this.asHeader(value, meta.line);
      return;
    }
    if (!isObject(value) || typeof value.type !== "string") {
      this.malformed("not a session entry (no string `type`)", meta.line);
      return;
    }
    this.repeated.share(value, this.entries[this.entries.length - 1]);
    this.entries.push(value as RawEntry);
    this.locations.push(meta, messageChars, output);
  }

  /** Throws, or in skip mode records the line as left out (pi drops such lines silently). */
  private malformed(what: string, line: number): void {
    if (!this.options.skipMalformed) throw new SessionFileError("malformed-line", this.file, what, line);
    this.skippedLines.push(line);
    this.warnings.push(sessionWarning("malformed-line", this.file, `${what}; line skipped`, line));
  }

  private markTruncated(meta: LineMeta): void {
    this.truncatedTail = { line: meta.line, byteOffset: meta.byteOffset, bytes: meta.bytes };
    const what = `last line (${meta.bytes} bytes at offset ${meta.byteOffset}) is incomplete and was ignored`;
    this.warnings.push(sessionWarning("truncated-last-line", this.file, what, meta.line));
  }

  private asHeader(value: unknown, line: number): SessionHeader {
    if (isObject(value) && value.type === "session" && typeof value.id === "string") {
      return value as SessionHeader;
    }
    throw new SessionFileError("not-a-session", this.file, 'first line is not a {"type":"session","id":…} header', line);
  }

  finish(byteLength: number): LoadedSession {
    return runSteps(this.finishSteps(byteLength));
  }

  /** finish, pausable (core/steps.ts): linear in the entries, which the scan's caller may not block on. */
  *finishSteps(byteLength: number): Steps<LoadedSession> {
    const header = this.header;
    if (header === null) throw new SessionFileError("empty", this.file, "file is empty (no session header)");
    const originalVersion = sessionVersionOf(header);
    migrateEntries(header, this.entries, (this.options.idFactory ?? deterministicIdFactory)(header.id));
    const { entries, raw, ids, uniqueIds } = yield* this.checkEntries();
    const locations = this.locations;
    let indexOf: Map<SessionEntry, number> | undefined;
    const at = <T>(entry: SessionEntry, read: (i: number) => T): T | undefined => {
      indexOf ??= indexByEntry(entries, raw);
      const i = indexOf.get(entry);
      return i === undefined ? undefined : read(i);
    };
    // Made once: the context measure asks for a message's length once per message.
    const lineAt = (i: number) => locations.line(i);
    const locationAt = (i: number) => locations.at(i);
    const messageCharsAt = (i: number) => locations.messageCharsAt(i);
    return {
      file: this.file,
      header,
      entries,
      lineOf: (entry) => at(entry, lineAt),
      locationOf: (entry) => at(entry, locationAt),
      messageCharsOf: (entry) => at(entry, messageCharsAt),
      originalVersion,
      byteLength,
      warnings: this.warnings,
      truncatedTail: this.truncatedTail,
      // A truncated tail is cut off by whoever writes next, so no newline is missing then.
      missingFinalNewline: this.endsWithoutNewline && this.truncatedTail === null,
      skippedLines: this.skippedLines,
      joinedLines: this.joinedLines,
      lightened: this.options.lightened === true,
      entryIds: ids,
      uniqueIds,
      locationsByIndex: { location: (k) => locations.at(raw[k]!), messageChars: (k) => locations.messageCharsAt(raw[k]!) },
    };
  }

  /**
   * Every entry needs a string id and a parentId to sit in the tree (an entry without them is
   * malformed). Duplicate ids only warn: pi keeps the last one.
   */
  private *checkEntries(): Steps<{ entries: SessionEntry[]; raw: Int32Array; ids: EntryIdSet; uniqueIds: boolean }> {
    // Entry ids (the appender's set), and the ids of stray headers (rare), which a later entry
    // may also duplicate: one set per entry, not two.
    const ids = new EntryIdSet(this.entries.length);
    const headerIds = new Set<string>();
    // The entries kept: all of them (the same array) unless one is left out, when a copy is made.
    let kept: SessionEntry[] | undefined;
    let uniqueIds = true;
    /** The index in `this.entries` (and `locations`) of each kept entry. */
    const raw = new Int32Array(this.entries.length);
    for (let i = 0; i < this.entries.length; i++) {
      if (stepDue(i)) yield;
      const entry = this.entries[i]!;
      const line = this.locations.line(i);
      if (entry.type === "session") {
        this.warnings.push(sessionWarning("extra-header", this.file, "second session header; pi ignores it", line));
        if (typeof entry.id === "string") {
          if (ids.has(entry.id) || headerIds.has(entry.id)) uniqueIds = false;
          headerIds.add(entry.id);
        }
      } else if (typeof entry.id !== "string" || !(entry.parentId === null || typeof entry.parentId === "string")) {
        this.malformed("entry lacks a string `id` or a `parentId`", line);
        kept ??= this.entries.slice(0, i) as SessionEntry[];
        continue;
      } else {
        // Added again when a duplicate: the set's last id stays the last entry's (pi's leaf).
        if (ids.add(entry.id) || (headerIds.size > 0 && headerIds.has(entry.id))) {
          uniqueIds = false;
          this.warnings.push(sessionWarning("duplicate-id", this.file, `duplicate entry id ${entry.id}; the last one wins`, line));
        }
      }
      raw[kept?.length ?? i] = i;
      kept?.push(entry as SessionEntry);
    }
    const entries = kept ?? (this.entries as SessionEntry[]);
    for (const kind of yield* unknownEntryKindsSteps(entries)) {
      this.warnings.push(sessionWarning("unknown-entry-type", this.file, describeUnknownKind(kind), this.locations.line(raw[kind.firstIndex]!)));
    }
    return { entries, raw: kept ? raw.subarray(0, kept.length) : raw, ids, uniqueIds };
  }
}

/** Each kept entry's index in the locations (`raw[k]` for `entries[k]`), by entry object. */
function indexByEntry(entries: readonly SessionEntry[], raw: Int32Array): Map<SessionEntry, number> {
  const indexOf = new Map<SessionEntry, number>();
  for (let k = 0; k < entries.length; k++) indexOf.set(entries[k]!, raw[k]!);
  return indexOf;
}

/** A piece of a glued line that is an entry (version 3: with its tree fields; older files get ids on migration). */
function isGluedEntry(value: Record<string, unknown>, current: boolean): boolean {
  if (typeof value.type !== "string") return false;
  if (!current || value.type === "session") return true;
  return typeof value.id === "string" && (value.parentId === null || typeof value.parentId === "string");
}
