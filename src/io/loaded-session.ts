/**
 * What reading a session file gives (a LoadedSession): the header, the entries, and where each
 * entry lies in the file (its line, and for a tool result the literal its output is), whether
 * the file was read on this thread (io/read-session.ts) or scanned by workers
 * (main/scan-session.ts). Built by io/session-builder.ts.
 */

import type { EntryIdSet } from "../core/entry-id-set.js";
import type { SessionEntry, SessionHeader } from "../core/session-types.js";
import type { OutputLiteral } from "./output-literal.js";
import type { SessionWarning } from "./session-errors.js";

/** Where one physical line lies in the file. */
export interface LineMeta {
  /** 1-based line number. */
  line: number;
  /** Offset of the line's first byte. */
  byteOffset: number;
  /** Length in bytes, without the "\n". */
  bytes: number;
  /** False for a last line that has no trailing newline. */
  terminated: boolean;
}

/** Where an entry came from; the shard scan also sets `messageChars` (JSON length of the entry's message) and `output` (io/output-literal.ts). */
export interface EntryLocation extends LineMeta {
  messageChars?: number;
  output?: OutputLiteral;
}

/** A last line without a trailing newline that did not parse: a writer crashed mid-line. */
export interface TruncatedTail {
  /** 1-based line number. */
  line: number;
  /** Offset of the line's first byte in the file. */
  byteOffset: number;
  /** Length of the partial line in bytes. */
  bytes: number;
}

export interface LoadedSession {
  /** Path as given to the reader. */
  file: string;
  /** First line; migrated to version 3 in memory when the file was older. */
  header: SessionHeader;
  /** Every entry after the header that pi's tree holds, in file order (version 3 shape). */
  entries: SessionEntry[];
  /** 1-based line number of an entry of this session (undefined for foreign objects). */
  lineOf(entry: SessionEntry): number | undefined;
  /** The entry's line and byte range in the file as read (undefined for foreign objects). */
  locationOf(entry: SessionEntry): EntryLocation | undefined;
  /** `locationOf(entry)?.messageChars`, without building the location. */
  messageCharsOf(entry: SessionEntry): number | undefined;
  /** Version declared by the file before migration (1 when absent). */
  originalVersion: number;
  /** Bytes read, i.e. the file size at read time. */
  byteLength: number;
  /** Non-fatal problems (duplicate ids, truncated tail, stray headers, glued entries). */
  warnings: SessionWarning[];
  /** Set when the last line was cut off; that line is not in `entries`. */
  truncatedTail: TruncatedTail | null;
  /** True when the file does not end with "\n" and the tail is not truncated (appenders add one first). */
  missingFinalNewline: boolean;
  /** 1-based numbers of malformed lines left out (only with `malformedLines: "skip"`). */
  skippedLines: number[];
  /** 1-based numbers of lines holding entries glued together that pi ignores (version-3 files). */
  joinedLines: number[];
  /**
   * True when long strings were replaced by placeholders (core/light-value.ts): such a session
   * serves planning and measuring, and must never be written back.
   */
  lightened: boolean;
  /**
   * The entries' ids, the last entry's id last (pi's leaf): what an appender needs, collected
   * while the entries were checked.
   */
  entryIds: EntryIdSet;
  /** No two entries (stray headers included) share an id: the branch walk may trust an entry's neighbour (core/session-tree.ts). */
  uniqueIds?: boolean;
  /**
   * Where `entries[k]` lies, by its index k: what locationOf and messageCharsOf say of it, without
   * a lookup by entry object (a map of every entry, built only if one is asked for).
   * Absent where locations are known by entry only.
   */
  locationsByIndex?: EntryLocationReader;
}

export interface EntryLocationReader {
  location(k: number): EntryLocation;
  messageChars(k: number): number | undefined;
}
