/**
 * Adds entries at the end of an existing session file without ever leaving it half-written: one
 * write(2) per line on an O_APPEND fd, fsync before resolving, and on failure the file is cut
 * back to its size before the append. Refuses to work on a file whose size changed since it was
 * read: someone else wrote it, and our idea of the leaf would be stale. (A version-1/2 file is
 * first rewritten as version 3: io/migrate-file.ts.)
 */
import { constants, fstatSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import type { CustomEntry } from "../core/session-types.js";
import { CURRENT_SESSION_VERSION } from "../core/session-types.js";
import { writeFully, writeFullyV, writeFullyVSync } from "./atomic-write.js";
import type { EntryIdSet } from "../core/entry-id-set.js";
import type { LoadedSession } from "./loaded-session.js";
import { CUSTOM_TYPE_INDEX } from "../core/custom-types.js";
import { crashPlanned, crashPoint } from "./crash-points.js";
import { asIoError, SessionFileError } from "./session-errors.js";
import { jsonText } from "../core/json-text.js";

export interface AppenderOptions {
  /** Clock in epoch ms for entry timestamps (default Date.now). */
  now?: () => number;
  /** Source of 8-hex entry ids (default crypto.randomBytes); retried until unused. */
  randomId?: () => string;
  /** Cut off an incomplete last line (see LoadedSession.truncatedTail) instead of refusing. */
  dropTruncatedTail?: boolean;
}

/** Appends entries to one session file; open with SessionAppender.open. */
export class SessionAppender {
  private handle: FileHandle | null;
  private queue: Promise<unknown> = Promise.resolve();
  private needsNewline: boolean;
  private currentLeaf: string | null;

  private constructor(
    private readonly file: string,
    handle: FileHandle,
    private size: number,
    private readonly knownIds: EntryIdSet,
    private readonly options: AppenderOptions,
    needsNewline: boolean,
  ) {
    this.handle = handle;
    this.needsNewline = needsNewline;
    this.currentLeaf = knownIds.last;
  }

  /** Opens `loaded.file` for appending; the leaf is the session's last entry. */
  static async open(loaded: LoadedSession, options: AppenderOptions = {}): Promise<SessionAppender> {
    if (loaded.originalVersion < CURRENT_SESSION_VERSION) {
      // pi would re-id every entry of an old file on load, ours included: migrate it first.
      throw new SessionFileError("io", loaded.file, `session file is version ${loaded.originalVersion}; run migrateFileInPlace before appending`);
    }
    const tail = loaded.truncatedTail;
    if (tail !== null && options.dropTruncatedTail !== true) {
      throw new SessionFileError("truncated-last-line", loaded.file, "last line is incomplete; refusing to append after it", tail.line);
    }
    const handle = await openForAppend(loaded.file);
    try {
      checkSize(handle, loaded.file, loaded.byteLength);
      // The partial line starts right after a "\n", so cutting there leaves a clean end.
      if (tail !== null) {
        await handle.truncate(tail.byteOffset);
        await handle.sync();
      }
    } catch (error) {
      await handle.close();
      throw asIoError(error, loaded.file, "cannot prepare the file for appending");
    }
    const size = tail === null ? loaded.byteLength : tail.byteOffset;
    const needsNewline = tail === null && loaded.missingFinalNewline;
    // The appender adds the ids it writes to the session's set; its last id is the leaf.
    return new SessionAppender(loaded.file, handle, size, loaded.entryIds, options, needsNewline);
  }

  /** Id of the entry the next append will hang under (null for an empty session). */
  get leafId(): string | null {
    return this.currentLeaf;
  }

  /**
   * Appends a pi `custom` entry under the current leaf; it becomes the new leaf. Durable when the
   * promise resolves, unless `durable: false`: then only once a later `sync()` resolves (group
   * commit: many lines, one fsync).
   */
  appendCustom(customType: string, data: unknown, { durable = true, dataJson }: { durable?: boolean; dataJson?: DataJson } = {}): Promise<CustomEntry> {
    return this.enqueue(async () => {
      // Key order is what pi's appendCustomEntry writes.
      const entry = {
        type: "custom",
        customType,
        data,
        id: this.newId(),
        parentId: this.currentLeaf,
        timestamp: new Date((this.options.now ?? Date.now)()).toISOString(),
      } as CustomEntry;
      await this.writeLine(serializeEntry(entry, dataJson), durable, customType === CUSTOM_TYPE_INDEX ? "index" : "other");
      this.adopt(entry.id);
      return entry;
    });
  }

  /** Makes every line written so far durable (one fsync). */
  sync(): Promise<void> {
    return this.enqueue(async () => {
      if (this.handle === null) throw new SessionFileError("io", this.file, "appender is closed");
      try {
        await this.handle.sync();
      } catch (error) {
        throw asIoError(error, this.file, "fsync failed");
      }
    });
  }

  /** Appends one line as given (no "\n" inside); an `id` in it becomes the new leaf. */
  appendRawLine(line: string): Promise<void> {
    return this.enqueue(async () => {
      if (line.includes("\n")) throw new SessionFileError("io", this.file, "a raw line must not contain a newline");
      await this.writeLine(line, true, "other");
      const id = idOfLine(line);
      if (id !== undefined) this.adopt(id);
    });
  }

  /** Waits for pending appends, then closes the file. */
  close(): Promise<void> {
    return this.enqueue(async () => {
      const handle = this.handle;
      this.handle = null;
      await handle?.close();
    });
  }

  /** Appends run one at a time so each sees the previous one's leaf and size. */
  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const result = this.queue.then(task);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async writeLine(line: string | Buffer[], durable: boolean, kind: "index" | "other"): Promise<void> {
    const handle = this.handle;
    if (handle === null) throw new SessionFileError("io", this.file, "appender is closed");
    checkSize(handle, this.file, this.size);
    const parts = lineParts(line, this.needsNewline);
    const length = parts.reduce((sum, part) => sum + part.length, 0);
    if (kind === "index" && crashPlanned("index-append-partial")) await simulateTornWrite(handle, Buffer.concat(parts));
    try {
      if (length <= SYNC_WRITE_MAX_BYTES) writeFullyVSync(handle.fd, parts);
      else await writeFullyV(handle, parts);
      if (durable) await handle.sync();
    } catch (error) {
      // A failed append must not leave a half line that would corrupt every later one.
      const restored = await handle.truncate(this.size).then(() => true, () => false);
      const what = restored ? "append failed; file restored" : "append failed and the file could NOT be restored";
      throw asIoError(error, this.file, what);
    }
    this.size += length;
    this.needsNewline = false;
    if (kind === "index") crashPoint("index-appended");
  }

  private adopt(id: string): void {
    this.knownIds.add(id);
    this.currentLeaf = id;
  }

  private newId(): string {
    const randomId = this.options.randomId ?? pooledRandomId;
    for (let attempt = 0; attempt < 100; attempt++) {
      const id = randomId();
      if (!this.knownIds.has(id)) return id;
    }
    throw new SessionFileError("duplicate-id", this.file, "could not find an unused entry id");
  }
}

/**
 * Lines up to this size are written on the calling thread: a thread-pool round trip costs more
 * than writing them to the page cache, and a session of many small chains appends thousands.
 * Longer lines are written off the thread, so that the event loop is not held while they are.
 */
const SYNC_WRITE_MAX_BYTES = 256 * 1024;

/** Random bytes for entry ids, drawn a few KiB at a time: one randomBytes call per entry cost more than its write. */
const idBytes = { pool: Buffer.alloc(0), next: 0 };

function pooledRandomId(): string {
  if (idBytes.next + 4 > idBytes.pool.length) {
    idBytes.pool = randomBytes(4096);
    idBytes.next = 0;
  }
  idBytes.next += 4;
  return idBytes.pool.toString("hex", idBytes.next - 4, idBytes.next);
}

async function openForAppend(file: string): Promise<FileHandle> {
  try {
    // No O_CREAT: appending to a session that vanished must fail, not start a headerless file.
    // No following a final link: its entries would land in another file than the one read.
    return await open(file, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new SessionFileError("not-found", file, "no such file", undefined, error);
    if (code === "ELOOP") throw new SessionFileError("io", file, "is a symbolic link; chainpress never appends through one", undefined, error);
    throw asIoError(error, file, "cannot open for appending");
  }
}

/** On the calling thread: one fstat(2) costs less than a thread-pool round trip, before every line. */
function checkSize(handle: FileHandle, file: string, expected: number): void {
  const { size } = fstatSync(handle.fd);
  if (size !== expected) {
    throw new SessionFileError("io", file, `file changed since it was read (expected ${expected} bytes, found ${size})`);
  }
}

function idOfLine(line: string): string | undefined {
  try {
    const value = JSON.parse(line) as unknown;
    const id = typeof value === "object" && value !== null ? (value as { id?: unknown }).id : undefined;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Crash tests only: write the first half of a line, make it durable, then die there. */
async function simulateTornWrite(handle: FileHandle, bytes: Buffer): Promise<void> {
  await writeFully(handle, bytes.subarray(0, Math.floor(bytes.length / 2)));
  await handle.sync();
  crashPoint("index-append-partial");
}

/** `JSON.stringify(data)`, as a string or as its UTF-8 bytes. */
export type DataJson = string | Uint8Array;

/**
 * The line pi writes for a custom entry. With `dataJson` (= JSON.stringify(entry.data), made by a
 * worker) the same bytes are assembled around it instead of serialising megabytes again.
 */
function serializeEntry(entry: CustomEntry, dataJson: DataJson | undefined): string | Buffer[] {
  if (dataJson === undefined) return jsonText(entry);
  const { type, customType, id, parentId, timestamp } = entry;
  const head = `${JSON.stringify({ type, customType }).slice(0, -1)},"data":`;
  const tail = `,${JSON.stringify({ id, parentId, timestamp }).slice(1)}`;
  if (typeof dataJson === "string") return `${head}${dataJson}${tail}`;
  // Three parts, one writev: the worker's megabytes are never copied on this thread.
  return [Buffer.from(head, "utf8"), Buffer.from(dataJson.buffer, dataJson.byteOffset, dataJson.byteLength), Buffer.from(tail, "utf8")];
}

/** The bytes of one line, with the newline a previous writer left out when needed (written with one writev). */
function lineParts(line: string | Buffer[], needsNewline: boolean): Buffer[] {
  if (typeof line === "string") return [Buffer.from(`${needsNewline ? "\n" : ""}${line}\n`, "utf8")];
  return [...(needsNewline ? [Buffer.from("\n")] : []), ...line, Buffer.from("\n")];
}
